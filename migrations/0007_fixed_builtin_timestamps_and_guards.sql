-- Built-in rows carry a fixed, known instant instead of the moment the migration ran, so nothing
-- (a test's clock, an "updated after created" check) depends on when a database was created.
UPDATE permission SET created_at = '2026-01-01T00:00:00.000Z', updated_at = '2026-01-01T00:00:00.000Z'
  WHERE id <= 22 AND created_at = updated_at;
--> statement-breakpoint
UPDATE role SET created_at = '2026-01-01T00:00:00.000Z', updated_at = '2026-01-01T00:00:00.000Z'
  WHERE key IS NOT NULL AND created_at = updated_at;
--> statement-breakpoint
-- Audit rows are history: no statement may change or remove one.
CREATE TRIGGER audit_log_immutable_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log rows are immutable');
END;
--> statement-breakpoint
CREATE TRIGGER audit_log_immutable_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log rows are immutable');
END;
--> statement-breakpoint
-- The write guard (src/lib/write.ts): `INSERT INTO write_guard (ok) SELECT 0 WHERE changes() = 0`
-- after a conditional UPDATE or DELETE aborts the whole batch (one transaction) when that
-- statement matched no row, so the statements after it never take effect. It never holds a row.
CREATE TABLE write_guard (
  ok INTEGER NOT NULL,
  CONSTRAINT write_guard CHECK (ok = 1)
);
