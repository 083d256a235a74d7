/**
 * What the app is assembled from. The Worker entry builds these from its bindings
 * (`depsFromEnv`); tests build them with a fixed clock; another runtime (Node with libSQL) can
 * build them from its own parts. Nothing in `src/` reaches for a global instead.
 */
import type { Config } from "./config";
import type { Db } from "./db/client";
import type { Resolver } from "./lib/dns";
import type { PushProvider } from "./lib/push";
import type { UrlSigner } from "./lib/s3";
import type { SmsProvider } from "./lib/sms";

export interface Clock {
  now(): Date;
  /** Waits `ms` by this clock (a school's move waits out the isolates' copies of the shard map); unset: real time. */
  wait?(ms: number): Promise<void>;
}

/** The part of a queue producer we use (Cloudflare's `Queue` satisfies it). */
export interface QueueProducer<Body = unknown> {
  send(body: Body): Promise<unknown>;
  sendBatch(messages: Iterable<{ body: Body }>): Promise<unknown>;
}

/** What an object store says about an object (Cloudflare's `R2Object` satisfies it). */
export interface StoredObject {
  size: number;
  etag: string;
  uploaded: Date;
  httpMetadata?: { contentType?: string };
}

/** The part of an object store we use (Cloudflare's `R2Bucket` satisfies it). */
export interface ObjectStore {
  head(key: string): Promise<StoredObject | null>;
  get(key: string): Promise<(StoredObject & { body: ReadableStream }) | null>;
  put(
    key: string,
    value: ArrayBuffer,
    options?: { httpMetadata?: { contentType?: string } },
  ): Promise<StoredObject | null>;
}

/**
 * Files deployed with the Worker (Workers Static Assets, read by path: `https://assets/fonts/x.ttf`;
 * Cloudflare's `Fetcher` satisfies it). The route lists' PDF fonts are read through it.
 */
export interface AssetStore {
  fetch(url: string): Promise<Response>;
}

export interface Deps {
  config: Config;
  /** The platform database (binding `DB`), which is also shard 0. */
  db: Db;
  /**
   * Every database by its binding's name, `DB` (the same handle as `db`) first: the shards schools
   * are spread over (src/db/shards.ts picks a school's): D1 bindings, or libSQL databases
   * (`LIBSQL_SHARD_<n>_URL`). Absent: one database (libSQL without shard settings).
   */
  shards?: Readonly<Record<string, Db>>;
  /**
   * The platform database when `db` is a shard's: a cron run over one shard's schools (src/jobs/
   * scheduled.ts runs the jobs once per database). Unset: `db` is the platform's.
   */
  platform?: Db;
  clock: Clock;
  sms: SmsProvider;
  /** Push delivery to devices (FCM, or the development push outbox). */
  push: PushProvider;
  storage: ObjectStore;
  /** Presigns object-storage URLs for clients (documents). */
  signer: UrlSigner;
  /** push: notifications; bulk: imports; webhook: deliveries of webhook events. */
  queues: { push: QueueProducer; bulk: QueueProducer; webhook: QueueProducer };
  /** Static assets: the PDF fonts (public/fonts, copied by scripts/docs-assets.mjs). */
  assets: AssetStore;
  /**
   * The live board's hubs: a Durable Object per school (src/modules/dismissal/hub.ts). Absent (a
   * runtime without Durable Objects, Node with libSQL): the live board answers as JSON only.
   */
  live?: LiveHubs;
  /** Host names to addresses (DNS over HTTPS): where a webhook's URL points (src/lib/dns.ts). */
  resolver: Resolver;
}

/** Durable Objects by name (Cloudflare's `DurableObjectNamespace` satisfies it). */
export interface LiveHubs {
  getByName(name: string): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

export const systemClock: Clock = {
  now: () => new Date(),
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
