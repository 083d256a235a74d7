/**
 * Migration 0038 gives the built-in driver role id 6. A school may have created a custom role that
 * took id 6 before: the migration moves it to the next free id with its grants and holders, then
 * inserts the driver role. Checked on a libSQL file migrated up to 0037, the way D1 applies files.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { migrationStatements } from "../../src/db/sql-script";

const dir = new URL("../../migrations/", import.meta.url).pathname;
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".sql"))
  .sort();
const AT = "2026-01-01T00:00:00.000Z";

describe("migration 0038 (the driver role)", () => {
  it("moves a custom role that held id 6, with its grants and holders, before inserting the driver role", async () => {
    const client = createClient({ url: `file:${join(mkdtempSync(join(tmpdir(), "driver-role-")), "school.db")}` });
    await client.execute("PRAGMA foreign_keys = ON");
    const apply = async (file: string) =>
      client.batch(migrationStatements(readFileSync(join(dir, file), "utf8")), "write");
    for (const file of files.filter((f) => f < "0038")) await apply(file);

    await client.batch(
      [
        `INSERT INTO school (id, name, name_search, time_zone, created_at, updated_at) VALUES (1, 'S', 's', 'UTC', '${AT}', '${AT}')`,
        `INSERT INTO user (id, phone, first_name, last_name, first_name_search, last_name_search, status, is_super_admin, created_at, updated_at) VALUES (10, '+15550009999', 'A', 'B', 'a', 'b', 'active', 0, '${AT}', '${AT}')`,
        `INSERT INTO role (id, key, name, name_search, school_id, created_at, updated_at) VALUES (6, NULL, 'Bus monitors', 'bus monitors', 1, '${AT}', '${AT}')`,
        "INSERT INTO role_permission (role_id, permission_id) VALUES (6, 15)",
        `INSERT INTO role_user (school_id, user_id, role_id, created_at, updated_at) VALUES (1, 10, 6, '${AT}', '${AT}')`,
      ],
      "write",
    );
    const before = await client.execute("SELECT max(id) AS id FROM role");
    const moved = Number(before.rows[0]?.id) + 1;

    const migration = files.find((f) => f.startsWith("0038"));
    if (!migration) throw new Error("no migration 0038");
    await apply(migration);

    const driver = await client.execute("SELECT key, name, school_id FROM role WHERE id = 6");
    expect(driver.rows[0]).toMatchObject({ key: "driver", name: "Driver", school_id: null });
    const custom = await client.execute("SELECT id, name, school_id FROM role WHERE name = 'Bus monitors'");
    expect(custom.rows.map((r) => ({ ...r }))).toEqual([{ id: moved, name: "Bus monitors", school_id: 1 }]);
    const grants = await client.execute(`SELECT permission_id FROM role_permission WHERE role_id = ${moved}`);
    expect(grants.rows.map((r) => Number(r.permission_id))).toEqual([15]);
    const holders = await client.execute(`SELECT user_id FROM role_user WHERE role_id = ${moved}`);
    expect(holders.rows.map((r) => Number(r.user_id))).toEqual([10]);
    // The driver role holds only its own grants, none of the moved role's.
    const driverGrants = await client.execute("SELECT permission_id FROM role_permission WHERE role_id = 6 ORDER BY 1");
    expect(driverGrants.rows.map((r) => Number(r.permission_id))).toEqual([82, 85, 87, 89]);
    expect((await client.execute("SELECT count(*) AS n FROM role_user WHERE role_id = 6")).rows[0]?.n).toBe(0);
    client.close();
  });
});
