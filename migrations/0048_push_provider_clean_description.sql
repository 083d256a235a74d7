-- push-provider.clean also removes the current school's topics (src/modules/notification/provider.ts).
UPDATE permission SET description = 'Remove the push provider''s topics of the school and of schools that no longer exist (super-admin only)' WHERE id = 103;
