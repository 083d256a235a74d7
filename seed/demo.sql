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

-- ---------------------------------------------------------------------------------------------
-- Application modules and school schedules (src/modules/application-module, src/modules/school-schedule).
-- Both schools initialised: a state for each of the 9 built-in modules (migration 0010), all
-- enabled except transport in Southside (school 2), which has no buses of its own: its members
-- get 403 "The transport module is disabled in school 2" on the transportation rules.
INSERT OR IGNORE INTO school_module (id, school_id, module_id, enabled, updated_by, created_at, updated_at) VALUES
  (1, 1, 1, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 1, 2, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (3, 1, 3, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (4, 1, 4, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (5, 1, 5, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (6, 1, 6, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (7, 1, 7, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (8, 1, 8, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (9, 1, 9, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (10, 2, 1, 0, 1, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (11, 2, 2, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (12, 2, 3, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (13, 2, 4, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (14, 2, 5, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (15, 2, 6, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (16, 2, 7, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (17, 2, 8, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (18, 2, 9, 1, NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- Schedules (school-local HH:mm) for every level each school offers, Monday (1) to Friday (5);
-- Friday is an early-release day. Northside (Mexico City, no DST) has all four levels, Southside
-- (New York) elementary, middle and high.
INSERT OR IGNORE INTO school_schedule (id, school_id, level, weekday, entry_time, dismissal_time, after_school_end_time, created_at, updated_at) VALUES
  (1, 1, 'preschool', 1, '08:30', '12:30', '15:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 1, 'preschool', 2, '08:30', '12:30', '15:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (3, 1, 'preschool', 3, '08:30', '12:30', '15:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (4, 1, 'preschool', 4, '08:30', '12:30', '15:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (5, 1, 'preschool', 5, '08:30', '12:00', '15:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (6, 1, 'elementary', 1, '08:00', '14:30', '17:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (7, 1, 'elementary', 2, '08:00', '14:30', '17:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (8, 1, 'elementary', 3, '08:00', '14:30', '17:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (9, 1, 'elementary', 4, '08:00', '14:30', '17:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (10, 1, 'elementary', 5, '08:00', '13:00', '16:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (11, 1, 'middle', 1, '07:30', '15:00', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (12, 1, 'middle', 2, '07:30', '15:00', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (13, 1, 'middle', 3, '07:30', '15:00', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (14, 1, 'middle', 4, '07:30', '15:00', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (15, 1, 'middle', 5, '07:30', '13:00', '16:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (16, 1, 'high', 1, '07:00', '15:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (17, 1, 'high', 2, '07:00', '15:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (18, 1, 'high', 3, '07:00', '15:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (19, 1, 'high', 4, '07:00', '15:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (20, 1, 'high', 5, '07:00', '13:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (21, 2, 'elementary', 1, '08:15', '15:00', '18:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (22, 2, 'elementary', 2, '08:15', '15:00', '18:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (23, 2, 'elementary', 3, '08:15', '15:00', '18:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (24, 2, 'elementary', 4, '08:15', '15:00', '18:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (25, 2, 'elementary', 5, '08:15', '13:00', '16:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (26, 2, 'middle', 1, '08:00', '15:15', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (27, 2, 'middle', 2, '08:00', '15:15', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (28, 2, 'middle', 3, '08:00', '15:15', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (29, 2, 'middle', 4, '08:00', '15:15', '17:30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (30, 2, 'middle', 5, '08:00', '13:00', '16:00', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (31, 2, 'high', 1, '07:45', '14:45', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (32, 2, 'high', 2, '07:45', '14:45', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (33, 2, 'high', 3, '07:45', '14:45', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (34, 2, 'high', 4, '07:45', '14:45', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (35, 2, 'high', 5, '07:45', '13:00', NULL, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');

-- ---- Schools: levels, contact, address (issue 8) ---------------------------------------------
-- Each demo school's address, then the school's levels, contact and address. The UPDATE only
-- fills a school still as seeded (no address yet, untouched since the seed's timestamp), so running
-- the seed again never overwrites what a developer changed through the API.
INSERT OR IGNORE INTO address (id, school_id, street, number, neighborhood, city, state, postal_code, country, latitude, longitude, created_at, updated_at) VALUES
  (1, 1, 'Avenida Insurgentes Sur', '1602', 'Credito Constructor', 'Ciudad de Mexico', 'CDMX', '03940', 'MX', 19.3638, -99.1801, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (2, 2, 'Atlantic Avenue', '350', 'Boerum Hill', 'Brooklyn', 'NY', '11217', 'US', 40.6866, -73.9826, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
UPDATE school SET levels = '["preschool","elementary","middle","high"]', email = 'office@northside.example.test', phone = '+525555550100', address_id = 1
  WHERE id = 1 AND address_id IS NULL AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE school SET levels = '["elementary","middle","high"]', email = 'office@southside.example.test', phone = '+17185550100', address_id = 2
  WHERE id = 2 AND address_id IS NULL AND updated_at = '2026-08-01T12:00:00.000Z';
