/**
 * Settings for apps built by tests outside the vitest bindings (libSQL in Node, config tests):
 * what every environment needs, and what production needs besides (the log SMS provider and a
 * local S3 endpoint are development-only). Plain data: workerd and Node tests both import it.
 */
export const BASE_VARS = {
  S3_BUCKET: "school-documents",
  S3_ACCESS_KEY_ID: "test",
  S3_SECRET_ACCESS_KEY: "test",
  IOS_LATEST_VERSION: "1.4.0",
  IOS_MIN_VERSION: "1.2.0",
  ANDROID_LATEST_VERSION: "1.4.0",
  ANDROID_MIN_VERSION: "1.2.0",
};

export const PRODUCTION_VARS = {
  ...BASE_VARS,
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "ACtest",
  TWILIO_AUTH_TOKEN: "twilio-token",
  TWILIO_FROM: "+15550001234",
  S3_ENDPOINT: "https://0123456789abcdef.r2.cloudflarestorage.com",
};

export const DEVELOPMENT_VARS = { ...BASE_VARS, SMS_PROVIDER: "log", S3_ENDPOINT: "http://127.0.0.1:4569" };
