/**
 * Settings for apps built by tests outside the vitest bindings (libSQL in Node, config tests):
 * what every environment needs, and what production needs besides (the log SMS and push
 * providers and a local S3 endpoint are development-only). Plain data: workerd and Node tests both import it.
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

/** A service account key as Firebase gives it (the shape only: nothing here signs with it). */
export const FCM_KEY = JSON.stringify({
  type: "service_account",
  project_id: "school-prod",
  private_key_id: "k1",
  private_key: "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
  client_email: "push@school-prod.iam.gserviceaccount.com",
  token_uri: "https://oauth2.googleapis.com/token",
});

export const PRODUCTION_VARS = {
  ...BASE_VARS,
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "ACtest",
  TWILIO_AUTH_TOKEN: "twilio-token",
  TWILIO_FROM: "+15550001234",
  S3_ENDPOINT: "https://0123456789abcdef.r2.cloudflarestorage.com",
  PUSH_PROVIDER: "fcm",
  FCM_SERVICE_ACCOUNT: FCM_KEY,
};

export const DEVELOPMENT_VARS = { ...BASE_VARS, SMS_PROVIDER: "log", S3_ENDPOINT: "http://127.0.0.1:4569" };
