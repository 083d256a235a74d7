/// <reference types="vite/client" />
import type { D1Migration } from "@cloudflare/vitest-pool-workers";

declare global {
  /**
   * What `getQueueResult` (cloudflare:test) answers: @cloudflare/vitest-pool-workers 0.15 names this
   * type without declaring it (workerd's own name for a queue() call's outcome).
   */
  interface FetcherQueueResult {
    outcome: string;
    ackAll: boolean;
    retryBatch: { retry: boolean; delaySeconds?: number };
    explicitAcks: string[];
    retryMessages: { msgId: string; delaySeconds?: number }[];
  }

  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      TEST_SEED: string;
      /** An instant: every file's seed moved to its day (test/setup.ts); empty: the seed's anchor week. */
      DEMO_TODAY: string;
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
