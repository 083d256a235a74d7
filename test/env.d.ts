/// <reference types="vite/client" />
import type { D1Migration } from "@cloudflare/vitest-plugin";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      TEST_SEED: string;
      /** docs/samples/teachers.xlsx, base64 (vitest.config.ts). */
      TEST_SAMPLE_TEACHERS: string;
      MODEL_RUNS: string;
      MODEL_SEED: string;
    }
  }
}

// Addresses of the local servers started by test/node/global-setup.ts.
declare module "vitest" {
  export interface ProvidedContext {
    s3Endpoint: string;
    smsEndpoint: string;
    /** The FCM stand-in (test/node/fcm-server.ts) and the service account key it trusts (JSON). */
    fcmEndpoint: string;
    fcmServiceAccount: string;
    /** The webhook receiver (test/node/webhook-receiver.ts). */
    webhookReceiver: string;
  }
}
