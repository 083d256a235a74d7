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

-- >>> People (generated by scripts/demo-people.ts; do not edit by hand)
-- Each school: 3 administrative staff, 12 teachers, 16 parents and a delegate (users 1001-1032 in
-- Northside, 1101-1132 in Southside; phones +1555600SNNN). Northside's delegate (+15556001032) acts
-- for the demo parent. The demo parent's profile joins the demo family.
INSERT OR IGNORE INTO user (id, phone, first_name, last_name, email, language, status, is_super_admin, created_at, updated_at) VALUES
  (1001, '+15556001001', 'Ximena', 'Ramírez', 'ximena.ramirez.1001@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1002, '+15556001002', 'Diego', 'Castillo', 'diego.castillo.1002@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1003, '+15556001003', 'Grace', 'Miller', 'grace.miller.1003@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1004, '+15556001004', 'Andrés', 'Flores', 'andres.flores.1004@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1005, '+15556001005', 'Fernanda', 'García', 'fernanda.garcia.1005@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1006, '+15556001006', 'Miguel', 'Rodríguez', 'miguel.rodriguez.1006@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1007, '+15556001007', 'Grace', 'Young', 'grace.young.1007@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1008, '+15556001008', 'Jorge', 'Hernández', 'jorge.hernandez.1008@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1009, '+15556001009', 'María', 'Pérez', 'maria.perez.1009@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1010, '+15556001010', 'Carlos', 'Morales', 'carlos.morales.1010@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1011, '+15556001011', 'Grace', 'Brown', 'grace.brown.1011@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1012, '+15556001012', 'Luis', 'Sánchez', 'luis.sanchez.1012@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1013, '+15556001013', 'Daniela', 'Ortiz', 'daniela.ortiz.1013@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1014, '+15556001014', 'Juan', 'López', 'juan.lopez.1014@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1015, '+15556001015', 'Grace', 'Walker', 'grace.walker.1015@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1016, '+15556001016', 'José', 'Castillo', 'jose.castillo.1016@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1017, '+15556001017', 'Ximena', 'González', 'ximena.gonzalez.1017@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1018, '+15556001018', 'Diego', 'Flores', 'diego.flores.1018@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1019, '+15556001019', 'Grace', 'Smith', 'grace.smith.1019@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1020, '+15556001020', 'Andrés', 'Rodríguez', 'andres.rodriguez.1020@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1021, '+15556001021', 'Fernanda', 'Torres', 'fernanda.torres.1021@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1022, '+15556001022', 'Miguel', 'Hernández', 'miguel.hernandez.1022@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1023, '+15556001023', 'Grace', 'Moore', 'grace.moore.1023@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1024, '+15556001024', 'Jorge', 'Morales', 'jorge.morales.1024@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1025, '+15556001025', 'María', 'Martínez', 'maria.martinez.1025@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1026, '+15556001026', 'Carlos', 'Sánchez', 'carlos.sanchez.1026@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1027, '+15556001027', 'Grace', 'Wright', 'grace.wright.1027@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1028, '+15556001028', 'Luis', 'López', 'luis.lopez.1028@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1029, '+15556001029', 'Daniela', 'Ramírez', 'daniela.ramirez.1029@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1030, '+15556001030', 'Juan', 'Castillo', 'juan.castillo.1030@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1031, '+15556001031', 'Grace', 'Miller', 'grace.miller.1031@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1032, '+15556001032', 'José', 'Flores', 'jose.flores.1032@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1101, '+15556002001', 'William', 'King', 'william.king.1101@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1102, '+15556002002', 'Olivia', 'Brown', 'olivia.brown.1102@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1103, '+15556002003', 'Carlos', 'Sánchez', 'carlos.sanchez.1103@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1104, '+15556002004', 'Olivia', 'Wright', 'olivia.wright.1104@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1105, '+15556002005', 'William', 'Taylor', 'william.taylor.1105@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1106, '+15556002006', 'Olivia', 'Walker', 'olivia.walker.1106@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1107, '+15556002007', 'Juan', 'Castillo', 'juan.castillo.1107@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1108, '+15556002008', 'Olivia', 'Miller', 'olivia.miller.1108@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1109, '+15556002009', 'William', 'Hall', 'william.hall.1109@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1110, '+15556002010', 'Olivia', 'Smith', 'olivia.smith.1110@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1111, '+15556002011', 'Diego', 'Rodríguez', 'diego.rodriguez.1111@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1112, '+15556002012', 'Olivia', 'Young', 'olivia.young.1112@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1113, '+15556002013', 'William', 'Johnson', 'william.johnson.1113@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1114, '+15556002014', 'Olivia', 'Moore', 'olivia.moore.1114@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1115, '+15556002015', 'Miguel', 'Morales', 'miguel.morales.1115@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1116, '+15556002016', 'Olivia', 'Brown', 'olivia.brown.1116@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1117, '+15556002017', 'William', 'Clark', 'william.clark.1117@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1118, '+15556002018', 'Olivia', 'Wright', 'olivia.wright.1118@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1119, '+15556002019', 'Carlos', 'López', 'carlos.lopez.1119@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1120, '+15556002020', 'Olivia', 'Walker', 'olivia.walker.1120@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1121, '+15556002021', 'William', 'Scott', 'william.scott.1121@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1122, '+15556002022', 'Olivia', 'Miller', 'olivia.miller.1122@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1123, '+15556002023', 'Juan', 'Flores', 'juan.flores.1123@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1124, '+15556002024', 'Olivia', 'Smith', 'olivia.smith.1124@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1125, '+15556002025', 'William', 'Wilson', 'william.wilson.1125@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1126, '+15556002026', 'Olivia', 'Young', 'olivia.young.1126@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1127, '+15556002027', 'Diego', 'Hernández', 'diego.hernandez.1127@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1128, '+15556002028', 'Olivia', 'Moore', 'olivia.moore.1128@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1129, '+15556002029', 'William', 'King', 'william.king.1129@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1130, '+15556002030', 'Olivia', 'Brown', 'olivia.brown.1130@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1131, '+15556002031', 'Miguel', 'Sánchez', 'miguel.sanchez.1131@example.test', 'es', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1132, '+15556002032', 'Olivia', 'Wright', 'olivia.wright.1132@example.test', 'en', 'active', 0, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
INSERT OR IGNORE INTO role_user (id, school_id, user_id, role_id, created_at, updated_at) VALUES
  (1001, 1, 1001, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1002, 1, 1002, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1003, 1, 1003, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1004, 1, 1004, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1005, 1, 1005, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1006, 1, 1006, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1007, 1, 1007, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1008, 1, 1008, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1009, 1, 1009, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1010, 1, 1010, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1011, 1, 1011, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1012, 1, 1012, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1013, 1, 1013, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1014, 1, 1014, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1015, 1, 1015, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1016, 1, 1016, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1017, 1, 1017, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1018, 1, 1018, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1019, 1, 1019, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1020, 1, 1020, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1021, 1, 1021, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1022, 1, 1022, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1023, 1, 1023, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1024, 1, 1024, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1025, 1, 1025, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1026, 1, 1026, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1027, 1, 1027, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1028, 1, 1028, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1029, 1, 1029, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1030, 1, 1030, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1031, 1, 1031, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1032, 2, 1101, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1033, 2, 1102, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1034, 2, 1103, 3, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1035, 2, 1104, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1036, 2, 1105, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1037, 2, 1106, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1038, 2, 1107, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1039, 2, 1108, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1040, 2, 1109, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1041, 2, 1110, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1042, 2, 1111, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1043, 2, 1112, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1044, 2, 1113, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1045, 2, 1114, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1046, 2, 1115, 4, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1047, 2, 1116, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1048, 2, 1117, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1049, 2, 1118, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1050, 2, 1119, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1051, 2, 1120, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1052, 2, 1121, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1053, 2, 1122, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1054, 2, 1123, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1055, 2, 1124, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1056, 2, 1125, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1057, 2, 1126, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1058, 2, 1127, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1059, 2, 1128, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1060, 2, 1129, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1061, 2, 1130, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1062, 2, 1131, 5, '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
UPDATE administrative_user SET position = 'Front office', employee_number = 'S-101' WHERE school_id = 1 AND user_id = 1001 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE administrative_user SET position = 'Registrar', employee_number = 'S-102' WHERE school_id = 1 AND user_id = 1002 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE administrative_user SET position = 'Transport coordinator', employee_number = 'S-103' WHERE school_id = 1 AND user_id = 1003 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Math","Geography"]', employee_number = 'T-101' WHERE school_id = 1 AND user_id = 1004 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Spanish","Art"]', employee_number = 'T-102' WHERE school_id = 1 AND user_id = 1005 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["English","Music"]', employee_number = 'T-103' WHERE school_id = 1 AND user_id = 1006 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Science","Physical Education"]', employee_number = 'T-104' WHERE school_id = 1 AND user_id = 1007 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["History","Biology"]', employee_number = 'T-105' WHERE school_id = 1 AND user_id = 1008 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Geography","Chemistry"]', employee_number = 'T-106' WHERE school_id = 1 AND user_id = 1009 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Art","Computer Science"]', employee_number = 'T-107' WHERE school_id = 1 AND user_id = 1010 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Music","Math"]', employee_number = 'T-108' WHERE school_id = 1 AND user_id = 1011 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Physical Education","Spanish"]', employee_number = 'T-109' WHERE school_id = 1 AND user_id = 1012 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Biology","English"]', employee_number = 'T-110' WHERE school_id = 1 AND user_id = 1013 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Chemistry","Science"]', employee_number = 'T-111' WHERE school_id = 1 AND user_id = 1014 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Computer Science","History"]', employee_number = 'T-112' WHERE school_id = 1 AND user_id = 1015 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1016 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1017 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1018 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1019 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'guardian' WHERE school_id = 1 AND user_id = 1020 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'grandparent' WHERE school_id = 1 AND user_id = 1021 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1022 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1023 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1024 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1025 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'guardian' WHERE school_id = 1 AND user_id = 1026 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'grandparent' WHERE school_id = 1 AND user_id = 1027 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1028 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1029 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 1 AND user_id = 1030 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 1 AND user_id = 1031 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE administrative_user SET position = 'Front office', employee_number = 'S-201' WHERE school_id = 2 AND user_id = 1101 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE administrative_user SET position = 'Registrar', employee_number = 'S-202' WHERE school_id = 2 AND user_id = 1102 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE administrative_user SET position = 'Transport coordinator', employee_number = 'S-203' WHERE school_id = 2 AND user_id = 1103 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Math","Geography"]', employee_number = 'T-201' WHERE school_id = 2 AND user_id = 1104 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Spanish","Art"]', employee_number = 'T-202' WHERE school_id = 2 AND user_id = 1105 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["English","Music"]', employee_number = 'T-203' WHERE school_id = 2 AND user_id = 1106 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Science","Physical Education"]', employee_number = 'T-204' WHERE school_id = 2 AND user_id = 1107 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["History","Biology"]', employee_number = 'T-205' WHERE school_id = 2 AND user_id = 1108 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Geography","Chemistry"]', employee_number = 'T-206' WHERE school_id = 2 AND user_id = 1109 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Art","Computer Science"]', employee_number = 'T-207' WHERE school_id = 2 AND user_id = 1110 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Music","Math"]', employee_number = 'T-208' WHERE school_id = 2 AND user_id = 1111 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Physical Education","Spanish"]', employee_number = 'T-209' WHERE school_id = 2 AND user_id = 1112 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Biology","English"]', employee_number = 'T-210' WHERE school_id = 2 AND user_id = 1113 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Chemistry","Science"]', employee_number = 'T-211' WHERE school_id = 2 AND user_id = 1114 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE teacher SET subjects = '["Computer Science","History"]', employee_number = 'T-212' WHERE school_id = 2 AND user_id = 1115 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1116 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1117 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1118 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1119 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'guardian' WHERE school_id = 2 AND user_id = 1120 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'grandparent' WHERE school_id = 2 AND user_id = 1121 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1122 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1123 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1124 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1125 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'guardian' WHERE school_id = 2 AND user_id = 1126 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'grandparent' WHERE school_id = 2 AND user_id = 1127 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1128 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1129 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'mother' WHERE school_id = 2 AND user_id = 1130 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET relationship = 'father' WHERE school_id = 2 AND user_id = 1131 AND updated_at = '2026-08-01T12:00:00.000Z';
UPDATE parent SET family_id = 1 WHERE school_id = 1 AND user_id = 4 AND family_id IS NULL AND updated_at = '2026-08-01T12:00:00.000Z';
INSERT OR IGNORE INTO delegate (id, school_id, parent_id, user_id, valid_from, valid_until, created_at, updated_at) VALUES
  (1001, 1, (SELECT id FROM parent WHERE school_id = 1 AND user_id = 4), 1032, '2026-08-24', '2027-06-30', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z'),
  (1002, 2, (SELECT id FROM parent WHERE school_id = 2 AND user_id = 1116), 1132, '2026-09-02', '2027-06-18', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');
-- <<< People
