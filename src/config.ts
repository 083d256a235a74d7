/**
 * The only module that reads the environment: vars and secrets are parsed once, at the edge of
 * the app, into a typed `Config`. A missing, malformed or unsafe setting is a `ConfigError`: the
 * Worker then answers every request 503 (problem+json, nothing revealed) and logs the reason,
 * rather than serving half-configured (src/lib/errors.ts).
 */
import { z } from "zod";

const version = z.string().regex(/^\d+(\.\d+){0,2}$/, "a version like 1.4.0");
/** A whole number from a var (which may arrive as text); absent or empty means "the default". */
const whole = (min: number, max: number) =>
  z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(min).max(max).optional());

/** A comma-separated list of `item`s; absent or empty means none. */
const commaList = (item: z.ZodString) =>
  z
    .string()
    .default("")
    .transform((s) =>
      s
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item));

/** `scheme://host[:port]`, as browsers send it in `Origin`. */
const ORIGIN = /^https?:\/\/[^/?#\s]+$/;

const ConfigSchema = z.object({
  ENVIRONMENT: z.enum(["development", "test", "staging", "production"]).default("production"),
  AUTH_SECRET: z.string().min(32, "AUTH_SECRET must be at least 32 characters"),
  SMS_PROVIDER: z.enum(["log", "twilio"]).default("log"),
  TWILIO_ACCOUNT_SID: z.string().optional(),
  TWILIO_AUTH_TOKEN: z.string().optional(),
  TWILIO_FROM: z.string().optional(),
  TWILIO_BASE_URL: z.url().default("https://api.twilio.com"),
  PUSH_PROVIDER: z.enum(["log", "fcm"]).default("log"),
  /** The Firebase service account's JSON key (a secret): `project_id`, `client_email`, `private_key`, `token_uri`. */
  FCM_SERVICE_ACCOUNT: z.string().optional(),
  FCM_BASE_URL: z.url().default("https://fcm.googleapis.com"),
  /** Topic subscriptions (Instance ID API). */
  FCM_IID_BASE_URL: z.url().default("https://iid.googleapis.com"),
  /** `DELETE /api/v1/reset-data` is refused (403 naming this) unless "true"; never allowed in production. */
  RESET_DATA_ENABLED: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["true", "false"]).default("false")),
  /**
   * R2's S3 endpoint; in development also a path (`/dev/s3`): the dev server itself, at whatever
   * origin a request reached it (its port, or a phone's view of the machine's address).
   */
  S3_ENDPOINT: z
    .string()
    .refine((s) => !s.includes("<"), {
      message: "still the placeholder: set https://<account id>.r2.cloudflarestorage.com",
      abort: true,
    })
    .refine((s) => /^\/\w/.test(s) || URL.canParse(s), "expected a URL (or, in development, a path such as /dev/s3)"),
  S3_BUCKET: z.string().min(1),
  S3_REGION: z.string().default("auto"),
  S3_ACCESS_KEY_ID: z.string().min(1),
  S3_SECRET_ACCESS_KEY: z.string().min(1),
  AUTH_RESEND_COOLDOWN_SECONDS: whole(0, 3600),
  AUTH_CODES_PER_HOUR: whole(1, 10_000),
  AUTH_PHONE_CHECKS_PER_NUMBER: whole(1, 100_000),
  AUTH_PHONE_CHECKS_PER_ADDRESS: whole(1, 100_000),
  CORS_ORIGINS: commaList(
    z.string().regex(ORIGIN, "each origin is scheme://host[:port], e.g. https://admin.example.org"),
  ),
  ACCESS_LOG: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["all", "problems"]).optional()),
  LIBSQL_URL: z.string().optional(),
  /**
   * The link people get to join a school in the app (share URL, invitation texts). The default is
   * under the reserved `.invalid` domain: a link that reaches no one's site until it is set.
   */
  APP_SHARE_URL: z.preprocess((v) => (v === "" ? undefined : v), z.url().default("https://school-app.invalid/join")),
  LIBSQL_AUTH_TOKEN: z.string().optional(),
  /**
   * The databases a new school may be placed on, by binding name (`DB`, `DB_SHARD_<n>`), comma
   * separated: a full database is closed to new schools by leaving it out. Unset or empty: every
   * database of the Worker (docs/scaling.md "Placement").
   */
  NEW_SCHOOLS_ON: commaList(
    z.string().regex(/^DB(_SHARD_[1-9]\d{0,3})?$/, "each name is DB or DB_SHARD_<n>, e.g. DB,DB_SHARD_1"),
  ),
  IOS_LATEST_VERSION: version,
  IOS_MIN_VERSION: version,
  ANDROID_LATEST_VERSION: version,
  ANDROID_MIN_VERSION: version,
});

/** An issue of the configuration: the setting it is about, and what is wrong (never its value). */
export type Issue = { setting: string; message: string };

/** The URL schemes the Worker's libSQL client (over HTTP or WebSocket) can reach. */
const LIBSQL_SCHEMES = new Set(["libsql:", "https:", "http:", "wss:", "ws:"]);

/** A libSQL database's URL as the Worker's client reaches it (`LIBSQL_URL`, each `LIBSQL_SHARD_<n>_URL`). */
const WorkerLibsqlUrl = z.string().superRefine((url, ctx) => {
  const scheme = URL.canParse(url) ? new URL(url).protocol : undefined;
  if (scheme && LIBSQL_SCHEMES.has(scheme)) return;
  ctx.addIssue({
    code: "custom",
    message:
      scheme === "file:"
        ? "a file: database needs the Node client; a Worker reaches libSQL at libsql://, https:// or wss://"
        : "expected a libSQL server's URL: libsql://, https://, http://, wss:// or ws://",
  });
});

/** A libSQL database of the deployment: the platform's (`DB`, from `LIBSQL_URL`) or a shard's. */
export interface LibsqlDatabase {
  /** Its name in the shard map (`school_shard.binding`): `DB`, `DB_SHARD_<n>`. */
  binding: string;
  url: string;
  authToken?: string;
  /** The settings it comes from, to name in a refusal. */
  settings: { url: string; token: string };
}

/** `LIBSQL_SHARD_<n>_URL` and `LIBSQL_SHARD_<n>_AUTH_TOKEN`: shard n, from 1 (8,191 fit the id ranges). */
const SHARD_SETTING = /^LIBSQL_SHARD_([1-9]\d{0,3})_(URL|AUTH_TOKEN)$/;
const MAX_SHARD = 8191;

const ShardSettings = z.record(
  z.string().regex(SHARD_SETTING, "expected LIBSQL_SHARD_<n>_URL or LIBSQL_SHARD_<n>_AUTH_TOKEN, n from 1 to 8191"),
  z.string(),
);

/**
 * The libSQL shards the environment names (docs/scaling.md "libSQL shards"): shard n's URL in
 * `LIBSQL_SHARD_<n>_URL`, its token in `LIBSQL_SHARD_<n>_AUTH_TOKEN` or else `LIBSQL_AUTH_TOKEN`
 * (a Turso group token opens every database of its group); binding name `DB_SHARD_<n>`, as the
 * shard map names it. URLs are not checked for the Worker here: scripts/libsql-migrate.ts takes
 * `file:` ones too. Ordered by shard number.
 */
export function libsqlShards(env: Record<string, unknown>): { databases: LibsqlDatabase[]; issues: Issue[] } {
  // Empty is unset, as for every setting.
  const entries = Object.entries(env).filter(([key, value]) => key.startsWith("LIBSQL_SHARD_") && value !== "");
  const parsed = ShardSettings.safeParse(Object.fromEntries(entries));
  const issues: Issue[] = (parsed.error?.issues ?? []).map((i) => ({
    setting: String(i.path[0] ?? "LIBSQL_SHARD_"),
    message: (i.code === "invalid_key" ? i.issues[0]?.message : undefined) ?? i.message,
  }));
  const bad = new Set(issues.map((i) => i.setting));
  const numbers = new Set<number>();
  for (const [key] of entries) {
    const match = SHARD_SETTING.exec(key);
    if (!match || bad.has(key)) continue;
    const n = Number(match[1]);
    if (n > MAX_SHARD) issues.push({ setting: key, message: `shard numbers go from 1 to ${MAX_SHARD}` });
    else numbers.add(n);
  }
  const text = (key: string) => {
    const value = env[key];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const databases: LibsqlDatabase[] = [];
  for (const n of [...numbers].sort((a, b) => a - b)) {
    const urlKey = `LIBSQL_SHARD_${n}_URL`;
    const tokenKey = `LIBSQL_SHARD_${n}_AUTH_TOKEN`;
    const url = text(urlKey);
    if (url === undefined) {
      if (!bad.has(urlKey)) issues.push({ setting: tokenKey, message: `a token for no shard: ${urlKey} is not set` });
      continue;
    }
    if (bad.has(urlKey) || bad.has(tokenKey)) continue;
    const own = text(tokenKey);
    databases.push({
      binding: `DB_SHARD_${n}`,
      url,
      authToken: own ?? text("LIBSQL_AUTH_TOKEN"),
      settings: { url: urlKey, token: own === undefined ? "LIBSQL_AUTH_TOKEN" : tokenKey },
    });
  }
  return { databases, issues };
}

/**
 * What one setting says about another, checked on the raw values whatever else is wrong, so that
 * every refusal is reported at once (an object refinement would run only once each field parsed,
 * and an operator would learn of one setting per deploy).
 */
function crossChecks(raw: Record<string, unknown>, failed: ReadonlySet<string>): Issue[] {
  const text = (key: string): string | undefined => {
    const v = raw[key];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const issues: Issue[] = [];
  const environment = text("ENVIRONMENT") ?? "production";
  const sms = text("SMS_PROVIDER") ?? "log";
  if (sms === "twilio") {
    for (const key of ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM"]) {
      if (!text(key)) issues.push({ setting: key, message: "required with SMS_PROVIDER=twilio (a secret)" });
    }
  }
  if ((text("PUSH_PROVIDER") ?? "log") === "fcm" && !failed.has("PUSH_PROVIDER")) {
    const account = serviceAccount(text("FCM_SERVICE_ACCOUNT"));
    if (typeof account === "string") issues.push({ setting: "FCM_SERVICE_ACCOUNT", message: account });
  }
  const libsqlUrl = text("LIBSQL_URL");
  if (libsqlUrl !== undefined && !failed.has("LIBSQL_URL")) {
    const problem = WorkerLibsqlUrl.safeParse(libsqlUrl).error?.issues[0]?.message;
    if (problem) issues.push({ setting: "LIBSQL_URL", message: problem });
  }
  const shards = libsqlShards(raw);
  issues.push(...shards.issues);
  for (const shard of shards.databases) {
    const problem = WorkerLibsqlUrl.safeParse(shard.url).error?.issues[0]?.message;
    if (problem) issues.push({ setting: shard.settings.url, message: problem });
  }
  if (shards.databases.length > 0 && libsqlUrl === undefined) {
    for (const shard of shards.databases) {
      issues.push({
        setting: shard.settings.url,
        message:
          "a libSQL shard needs LIBSQL_URL, the platform database (shard 0); a D1 Worker's shards are D1 bindings",
      });
    }
  }
  if (environment === "development") return issues;
  // What only a developer's machine may have: readable sign-in codes and a local S3 endpoint.
  if (sms === "log" && !failed.has("SMS_PROVIDER")) {
    issues.push({
      setting: "SMS_PROVIDER",
      message: `"log" keeps sign-in codes in the development outbox: only with ENVIRONMENT=development (here ${environment}); use "twilio"`,
    });
  }
  if ((text("PUSH_PROVIDER") ?? "log") === "log" && !failed.has("PUSH_PROVIDER")) {
    issues.push({
      setting: "PUSH_PROVIDER",
      message: `"log" keeps pushes in the development outbox: only with ENVIRONMENT=development (here ${environment}); use "fcm"`,
    });
  }
  if (text("RESET_DATA_ENABLED") === "true" && environment === "production") {
    issues.push({
      setting: "RESET_DATA_ENABLED",
      message: "the data reset removes every school's data: never enabled in production",
    });
  }
  const share = text("APP_SHARE_URL");
  if (share !== undefined && !share.startsWith("https://") && !failed.has("APP_SHARE_URL")) {
    issues.push({ setting: "APP_SHARE_URL", message: "must be https outside development" });
  }
  const s3 = text("S3_ENDPOINT");
  if (s3 !== undefined && !s3.startsWith("https://") && !failed.has("S3_ENDPOINT")) {
    issues.push({
      setting: "S3_ENDPOINT",
      message: "must be https outside development (R2: https://<account id>.r2.cloudflarestorage.com)",
    });
  }
  return issues;
}

export type Config = ReturnType<typeof toConfig>;

/** Vars or secrets that make the Worker refuse to serve. The message names settings, never values. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    message: string,
    /** The settings at fault, each once. */
    readonly settings: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

function toConfig(v: z.infer<typeof ConfigSchema>, raw: Record<string, unknown>) {
  const account = v.PUSH_PROVIDER === "fcm" ? serviceAccount(v.FCM_SERVICE_ACCOUNT) : undefined;
  // crossChecks refused a malformed key before this runs.
  const fcm = typeof account === "object" ? account : undefined;
  const isDevelopment = v.ENVIRONMENT === "development";
  // Strict unless development, where a developer signs in many times an hour from one address.
  const strictUnlessDev = (value: number | undefined, strict: number, dev: number) =>
    value ?? (isDevelopment ? dev : strict);
  return {
    environment: v.ENVIRONMENT,
    isDevelopment,
    authSecret: v.AUTH_SECRET,
    /** Limits on sign-in codes and number checks (docs/decisions.md, "Auth"). */
    authLimits: {
      /** Seconds between two codes for one number. */
      resendCooldownSeconds: strictUnlessDev(v.AUTH_RESEND_COOLDOWN_SECONDS, 60, 0),
      /** Codes per number per rolling hour. */
      codesPerHour: strictUnlessDev(v.AUTH_CODES_PER_HOUR, 5, 100),
      /** `verify-phone-number` calls per number per hour. */
      phoneChecksPerNumber: strictUnlessDev(v.AUTH_PHONE_CHECKS_PER_NUMBER, 10, 1000),
      /** `verify-phone-number` calls per client address per 10 minutes. */
      phoneChecksPerAddress: strictUnlessDev(v.AUTH_PHONE_CHECKS_PER_ADDRESS, 30, 1000),
    },
    sms:
      v.SMS_PROVIDER === "twilio"
        ? {
            provider: "twilio" as const,
            accountSid: v.TWILIO_ACCOUNT_SID ?? "",
            authToken: v.TWILIO_AUTH_TOKEN ?? "",
            from: v.TWILIO_FROM ?? "",
            baseUrl: v.TWILIO_BASE_URL,
          }
        : { provider: "log" as const },
    push: fcm
      ? {
          provider: "fcm" as const,
          account: fcm,
          baseUrl: v.FCM_BASE_URL.replace(/\/+$/, ""),
          iidBaseUrl: v.FCM_IID_BASE_URL.replace(/\/+$/, ""),
        }
      : { provider: "log" as const },
    /** Whether `DELETE /api/v1/reset-data` may run (never in production: refused above). */
    resetDataEnabled: v.RESET_DATA_ENABLED === "true",
    s3: {
      endpoint: v.S3_ENDPOINT.replace(/\/+$/, ""),
      bucket: v.S3_BUCKET,
      region: v.S3_REGION,
      accessKeyId: v.S3_ACCESS_KEY_ID,
      secretAccessKey: v.S3_SECRET_ACCESS_KEY,
    },
    cors: {
      /** Exact origins allowed to call the API from a browser. */
      origins: v.CORS_ORIGINS,
      /** In development with no list: any loopback origin (http://localhost:<any port>, ...). */
      loopback: isDevelopment && v.CORS_ORIGINS.length === 0,
    },
    /**
     * Which requests get an access-log line: "all", or "problems" (status 400 and up, or slower than
     * a second). Workers Logs already records every invocation (method, URL, status, time), so
     * production logs only the lines that add to it; docs/performance.md measured what a line costs.
     */
    accessLog: v.ACCESS_LOG ?? (isDevelopment ? "all" : "problems"),
    /** The app link shared to join a school (`GET /api/v1/user/share-url`, invitation texts). */
    appShareUrl: v.APP_SHARE_URL,
    /**
     * The libSQL databases when `LIBSQL_URL` is set: the platform's (`DB`, shard 0) and each shard's
     * (`LIBSQL_SHARD_<n>_URL`: docs/scaling.md "libSQL shards").
     */
    libsql: v.LIBSQL_URL
      ? { url: v.LIBSQL_URL, authToken: v.LIBSQL_AUTH_TOKEN, shards: libsqlShards(raw).databases }
      : undefined,
    /** The databases a new school may be placed on (`NEW_SCHOOLS_ON`); empty: every database. */
    newSchoolsOn: v.NEW_SCHOOLS_ON,
    appVersions: {
      ios: { latest: v.IOS_LATEST_VERSION, minimum: v.IOS_MIN_VERSION },
      android: { latest: v.ANDROID_LATEST_VERSION, minimum: v.ANDROID_MIN_VERSION },
    },
  };
}

const ServiceAccount = z.object({
  project_id: z.string().min(1),
  client_email: z.string().min(1),
  private_key: z.string().includes("PRIVATE KEY"),
  private_key_id: z.string().optional(),
  token_uri: z.url(),
});
export type ServiceAccount = z.infer<typeof ServiceAccount>;

/** The FCM service account's JSON key, parsed, or what is wrong with it (naming the secret's fields, never its value). */
function serviceAccount(json: string | undefined): ServiceAccount | string {
  let value: unknown;
  try {
    value = JSON.parse(json ?? "");
  } catch {
    return "required with PUSH_PROVIDER=fcm: the service account's JSON key (a secret)";
  }
  const parsed = ServiceAccount.safeParse(value);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join(".")).join(", ");
    return `the service account's JSON key lacks or has a malformed ${fields}`;
  }
  return parsed.data;
}

const cache = new WeakMap<object, Config>();

/**
 * Parses vars and secrets (memoised per env object: the parse is pure). Throws `ConfigError`
 * naming every setting that is wrong, in one message, each once per problem.
 */
export function loadConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    const parsed = ConfigSchema.safeParse(env);
    const own: Issue[] = parsed.success
      ? []
      : parsed.error.issues.map((i) => ({ setting: i.path.join("."), message: i.message }));
    // The Worker's env is an object of vars and secrets by name (its interface has no index signature).
    const raw = env as Record<string, unknown>;
    const issues = [...own, ...crossChecks(raw, new Set(own.map((i) => i.setting)))];
    if (!parsed.success || issues.length > 0) {
      const fields = issues
        .sort((a, b) => (a.setting < b.setting ? -1 : a.setting > b.setting ? 1 : 0))
        .map((i) => `${i.setting}: ${i.message}`)
        .join("; ");
      throw new ConfigError(`invalid configuration (${issues.length}): ${fields}`, [
        ...new Set(issues.map((i) => i.setting)),
      ]);
    }
    config = toConfig(parsed.data, raw);
    cache.set(env, config);
  }
  return config;
}

/** Whether the development-only routes may be mounted: a valid configuration that says so. */
export function servesDevelopmentRoutes(env: object): boolean {
  try {
    return loadConfig(env).isDevelopment;
  } catch {
    return false;
  }
}
