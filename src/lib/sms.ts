/**
 * SMS delivery behind one interface, chosen by `SMS_PROVIDER`:
 * - `log`: keeps each message in the development outbox (`GET /api/v1/dev/outbox`);
 * - `twilio`: Twilio's Messages REST API (`TWILIO_BASE_URL` points elsewhere in tests).
 */
import type { Config } from "../config";
import type { Db } from "../db/client";
import { devOutbox } from "../db/schema/dev";
import { ApiError } from "./errors";
import { m } from "./message";

export interface SmsProvider {
  send(to: string, body: string): Promise<void>;
}

export function logSms(db: Db, clock: { now(): Date }): SmsProvider {
  return {
    async send(to, body) {
      await db.insert(devOutbox).values({ to, body, createdAt: clock.now().toISOString() });
    },
  };
}

export function twilioSms(config: {
  accountSid: string;
  authToken: string;
  from: string;
  baseUrl: string;
}): SmsProvider {
  return {
    async send(to, body) {
      const url = `${config.baseUrl.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`;
      const res = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Basic ${btoa(`${config.accountSid}:${config.authToken}`)}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ To: to, From: config.from, Body: body }),
      });
      if (!res.ok) {
        console.error(JSON.stringify({ level: "error", sms: "twilio", status: res.status, body: await res.text() }));
        throw new ApiError(503, m`The SMS provider is unavailable; try again shortly`);
      }
    },
  };
}

export function smsFromConfig(config: Config, db: Db, clock: { now(): Date }): SmsProvider {
  return config.sms.provider === "twilio" ? twilioSms(config.sms) : logSms(db, clock);
}
