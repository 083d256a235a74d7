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
