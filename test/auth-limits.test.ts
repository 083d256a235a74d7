/**
 * Settings (src/config.ts): the sign-in limits are strict unless the environment is development,
 * where a developer signs in many times an hour; an explicit value always wins.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config";
import { PRODUCTION_VARS } from "./config-vars";

/** The settings production needs, and nothing else. */
const REQUIRED = { AUTH_SECRET: "config-test-secret-0123456789abcdef0123456789", ...PRODUCTION_VARS };

const STRICT = { resendCooldownSeconds: 60, codesPerHour: 5, phoneChecksPerNumber: 10, phoneChecksPerAddress: 30 };

describe("sign-in limits", () => {
  it("are strict when ENVIRONMENT is unset, production, staging or test", () => {
    expect(loadConfig({ ...REQUIRED }).authLimits).toEqual(STRICT);
    for (const ENVIRONMENT of ["production", "staging", "test"]) {
      expect(loadConfig({ ...REQUIRED, ENVIRONMENT }).authLimits, ENVIRONMENT).toEqual(STRICT);
    }
  });

  it("are relaxed in development", () => {
    expect(loadConfig({ ...REQUIRED, ENVIRONMENT: "development" }).authLimits).toEqual({
      resendCooldownSeconds: 0,
      codesPerHour: 100,
      phoneChecksPerNumber: 1000,
      phoneChecksPerAddress: 1000,
    });
  });

  it("take explicit values, in development too, as text (vars, .dev.vars) or numbers (wrangler.toml)", () => {
    const vars = {
      AUTH_RESEND_COOLDOWN_SECONDS: "60",
      AUTH_CODES_PER_HOUR: 5,
      AUTH_PHONE_CHECKS_PER_NUMBER: "10",
      AUTH_PHONE_CHECKS_PER_ADDRESS: "30",
    };
    expect(loadConfig({ ...REQUIRED, ENVIRONMENT: "development", ...vars }).authLimits).toEqual(STRICT);
    expect(
      loadConfig({ ...REQUIRED, AUTH_RESEND_COOLDOWN_SECONDS: "0", AUTH_CODES_PER_HOUR: "20" }).authLimits,
    ).toMatchObject({ resendCooldownSeconds: 0, codesPerHour: 20 });
  });

  it("treat an empty value as unset", () => {
    expect(loadConfig({ ...REQUIRED, AUTH_RESEND_COOLDOWN_SECONDS: "", AUTH_CODES_PER_HOUR: "" }).authLimits).toEqual(
      STRICT,
    );
  });

  it("refuse values that are not whole numbers in range, naming the setting", () => {
    for (const [name, value] of [
      ["AUTH_RESEND_COOLDOWN_SECONDS", "-1"],
      ["AUTH_RESEND_COOLDOWN_SECONDS", "1.5"],
      ["AUTH_CODES_PER_HOUR", "0"],
      ["AUTH_CODES_PER_HOUR", "many"],
      ["AUTH_PHONE_CHECKS_PER_NUMBER", "0"],
      ["AUTH_PHONE_CHECKS_PER_ADDRESS", "ten"],
    ] as const) {
      expect(() => loadConfig({ ...REQUIRED, [name]: value }), `${name}=${value}`).toThrow(name);
    }
  });
});
