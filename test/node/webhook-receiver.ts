/**
 * A webhook receiver on loopback, as an integrator would run one: every delivery is verified with
 * the `standardwebhooks` library (the reference implementation of the Standard Webhooks
 * specification) against the secrets the test configured for that endpoint, and a repeated
 * `webhook-id` is recognised as a replay. The service under test runs on a test clock, so the
 * library's timestamp tolerance (5 minutes) is checked against the time the test gives the receiver.
 *
 * - `PUT /endpoints/{name}` `{ secrets, status?, now? }`: the secrets to verify with, the status to
 *   answer (default 204), the receiver's "now" (seconds since the epoch);
 * - `POST /hook/{name}`: a delivery, answered with the configured status;
 * - `GET /received/{name}`: what arrived there, in order.
 *
 * It is also the tests' DNS: a DNS-over-HTTPS server speaking the JSON API as Cloudflare's
 * (`GET /dns-query?name=&type=A|AAAA` with `accept: application/dns-json`, answering
 * `{ Status, Answer: [{ name, type, TTL, data }] }`; a name it does not know is NXDOMAIN, Status 3):
 * - `PUT /dns/{name}` `{ A?, AAAA?, fail? }`: the addresses the name has (fail: answer 503);
 * - `GET /dns-queries/{name}`: how many questions about the name arrived.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

interface Endpoint {
  secrets: string[];
  status: number;
  now: number;
}

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The index of each configured secret the library verified the delivery with. */
  verifiedWith: number[];
  /** Why the library refused it with each secret that did not verify. */
  refusals: string[];
  /** The same webhook-id arrived before. */
  replay: boolean;
}

/** The library's verification, with its timestamp tolerance against the receiver's clock. */
class ReceiverWebhook extends Webhook {
  constructor(
    secret: string,
    private readonly now: number,
  ) {
    super(secret);
  }
  override verify(payload: string, headers: Record<string, string>) {
    const realNow = Date.now;
    Date.now = () => this.now * 1000;
    try {
      return super.verify(payload, headers);
    } finally {
      Date.now = realNow;
    }
  }
}

export async function startWebhookReceiver() {
  const endpoints = new Map<string, Endpoint>();
  const received = new Map<string, Received[]>();
  const zone = new Map<string, { A?: string[]; AAAA?: string[]; fail?: boolean }>();
  const questions = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, kind, name = ""] = url.pathname.split("/");
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const reply = (status: number, body?: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(body === undefined ? undefined : JSON.stringify(body));
      };
      if (req.method === "PUT" && kind === "endpoints") {
        const given = JSON.parse(raw) as Partial<Endpoint>;
        endpoints.set(name, { secrets: given.secrets ?? [], status: given.status ?? 204, now: given.now ?? 0 });
        return reply(204);
      }
      if (req.method === "GET" && kind === "received") return reply(200, received.get(name) ?? []);
      if (req.method === "PUT" && kind === "dns") {
        zone.set(name.toLowerCase(), JSON.parse(raw));
        return reply(204);
      }
      if (req.method === "GET" && kind === "dns-queries") return reply(200, { count: questions.get(name) ?? 0 });
      if (req.method === "GET" && kind === "dns-query") {
        if (req.headers.accept !== "application/dns-json") return reply(415);
        const qname = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
        const type = url.searchParams.get("type");
        if (type !== "A" && type !== "AAAA") return reply(400, { error: "type" });
        questions.set(qname, (questions.get(qname) ?? 0) + 1);
        const records = zone.get(qname);
        if (records?.fail) return reply(503);
        res.writeHead(200, { "content-type": "application/dns-json" });
        const answer = (records?.[type] ?? []).map((data) => ({
          name: `${qname}.`,
          type: type === "A" ? 1 : 28,
          TTL: 60,
          data,
        }));
        return res.end(
          JSON.stringify({
            Status: records ? 0 : 3,
            TC: false,
            RD: true,
            RA: true,
            AD: false,
            CD: false,
            Question: [{ name: `${qname}.`, type: type === "A" ? 1 : 28 }],
            ...(answer.length > 0 ? { Answer: answer } : {}),
          }),
        );
      }
      if (req.method === "POST" && kind === "hook") {
        const endpoint = endpoints.get(name) ?? { secrets: [], status: 404, now: 0 };
        const headers = {
          "webhook-id": String(req.headers["webhook-id"] ?? ""),
          "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
          "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
        };
        const verifiedWith: number[] = [];
        const refusals: string[] = [];
        endpoint.secrets.forEach((secret, i) => {
          try {
            new ReceiverWebhook(secret, endpoint.now).verify(raw, headers);
            verifiedWith.push(i);
          } catch (err) {
            refusals.push(err instanceof Error ? err.message : String(err));
          }
        });
        const list = received.get(name) ?? [];
        list.push({
          id: headers["webhook-id"],
          timestamp: headers["webhook-timestamp"],
          signature: headers["webhook-signature"],
          body: raw,
          verifiedWith,
          refusals,
          replay: list.some((r) => r.id === headers["webhook-id"]),
        });
        received.set(name, list);
        return reply(endpoint.status);
      }
      reply(404);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
