-- Demo data for local development and tests. Idempotent: fixed ids, fixed timestamps and
-- INSERT OR IGNORE, so running it twice changes nothing. Sign in as any of these numbers through the dev outbox.
INSERT OR IGNORE INTO school (id, name, time_zone, created_at, updated_at) VALUES
  (1, 'Northside Demo School', 'America/Mexico_City', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 'Southside Demo School', 'America/New_York', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

INSERT OR IGNORE INTO user (id, phone, first_name, last_name, email, status, is_super_admin, created_at, updated_at) VALUES
  (1, '+15550000001', 'Sam', 'Super', 'super@example.test', 'active', 1, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, '+15550000002', 'Alma', 'Admin', 'admin.north@example.test', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (3, '+15550000003', 'Tomas', 'Teacher', 'teacher.north@example.test', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (4, '+15550000004', 'Paula', 'Parent', 'parent.north@example.test', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (5, '+15550000012', 'Sofia', 'Admin', 'admin.south@example.test', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- Roles: 1 super-admin, 2 school-admin, 3 staff, 4 teacher, 5 parent (migrations/0001).
INSERT OR IGNORE INTO role_user (id, school_id, user_id, role_id, created_at, updated_at) VALUES
  (1, 1, 2, 2, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 1, 3, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (3, 1, 4, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (4, 2, 5, 2, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- The parent's family and child in the first school.
INSERT OR IGNORE INTO family (id, school_id, family_number, name, created_at, updated_at) VALUES (1, 1, 'F-0001', 'Parent family', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
INSERT OR IGNORE INTO student (id, school_id, family_id, first_name, last_name, created_at, updated_at) VALUES (1, 1, 1, 'Pablo', 'Parent', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
INSERT OR IGNORE INTO parent (id, school_id, family_id, user_id, created_at, updated_at) VALUES (1, 1, 1, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- Each school's configuration for the 2026-2027 school year.
INSERT OR IGNORE INTO school_configuration (id, school_id, name, start_date, end_date, max_parents_per_family, created_at, updated_at) VALUES
  (1, 1, '2026-2027', '2026-08-24', '2027-06-30', 2, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 2, '2026-2027', '2026-09-02', '2027-06-18', 2, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- >>> Legal documents (platform): terms of service v1 and privacy policy v1, both published. The demo
-- parent (user 4) has accepted the terms but not the privacy policy, so GET /api/v1/user/me lists the
-- privacy policy in legal.mustAccept for them.
INSERT OR IGNORE INTO legal_document (id, kind, version, title, body, status, published_at, created_at, updated_at) VALUES
  (1, 'terms', 1, 'Terms of service', '# Terms of service

By using the school app you agree to use it only for your own family''s school business.

1. Keep your sign-in codes to yourself.
2. Tell the school when your phone number changes.', 'published', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 'privacy', 1, 'Privacy policy', '# Privacy policy

The school keeps your family''s contact details, your children''s classes and how they go home each day.
Only the school''s staff and you can see them.', 'published', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

INSERT OR IGNORE INTO legal_document_acceptance (id, user_id, legal_document_id, accepted_at, created_at, updated_at) VALUES
  (1, 4, 1, '2026-08-02T12:00:00.000Z', '2026-08-02T12:00:00.000Z', '2026-08-02T12:00:00.000Z');
-- <<< Legal documents
