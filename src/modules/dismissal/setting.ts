/**
 * The school's dismissal setting: its position and how near a guardian must be to say "I'm here".
 * `GET /api/v1/dismissal/setting` (staff) and `PUT` (`dismissal.manage`: school admins).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { DismissalSettings, dismissalSettings } from "../../db/schema/dismissal";
import type { SchoolCtx } from "../../lib/context";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { permissions } from "./permissions";

export const Latitude = z
  .number()
  .min(-90)
  .max(90)
  .openapi({ example: 25.6866, description: "Degrees north (WGS 84)" });
export const Longitude = z
  .number()
  .min(-180)
  .max(180)
  .openapi({ example: -100.3161, description: "Degrees east (WGS 84)" });

const Setting = z
  .object({
    latitude: Latitude.nullable(),
    longitude: Longitude.nullable(),
    radiusMeters: z.number().int().nullable().openapi({
      description: 'How far from the school an "I\'m here" may be, in metres (null: not set, not checked)',
    }),
  })
  .openapi("DismissalSetting");

const SettingBody = z.strictObject({
  latitude: Latitude,
  longitude: Longitude,
  radiusMeters: z.number().int().min(10).max(20000).openapi({ example: 300, description: "Metres, 10 to 20,000" }),
});

const getRoute = defineRoute({
  method: "get",
  path: "/api/v1/dismissal/setting",
  tag: "Transport",
  operationId: "getDismissalSetting",
  summary: "The school's dismissal position and radius",
  access: permissions.read,
  module: "dismissal",
  responses: { 200: json(Setting, "The setting (nulls: not set)") },
});

const putRoute = defineRoute({
  method: "put",
  path: "/api/v1/dismissal/setting",
  tag: "Transport",
  operationId: "updateDismissalSetting",
  summary: "Set the school's dismissal position and radius",
  access: permissions.manage,
  module: "dismissal",
  audit: "dismissal-setting",
  request: { body: jsonBody(SettingBody, "DismissalSettingBody") },
  responses: { 204: noContent },
});

/** The school's setting row, if set. */
export const settingQuery = (ctx: SchoolCtx) =>
  DismissalSettings.select(ctx, {
    id: dismissalSettings.id,
    latitude: dismissalSettings.latitude,
    longitude: dismissalSettings.longitude,
    radiusMeters: dismissalSettings.radiusMeters,
  }).limit(1);

export async function getSetting(ctx: SchoolCtx) {
  const row = await settingQuery(ctx).first();
  return {
    latitude: row?.latitude ?? null,
    longitude: row?.longitude ?? null,
    radiusMeters: row?.radiusMeters ?? null,
  };
}

export async function updateSetting(ctx: SchoolCtx, { body }: InputOf<typeof putRoute>): Promise<void> {
  const row = await settingQuery(ctx).first();
  const batch = new Batch(ctx);
  if (row) batch.add(...DismissalSettings.updateOne(ctx, row.id, body));
  else batch.add(...DismissalSettings.insert(ctx, body));
  await batch.commit();
}

export const getSettingOperation = operation(getRoute, getSetting);
export const updateSettingOperation = operation(putRoute, updateSetting);

/** Metres between two positions (haversine, on a sphere of the Earth's mean radius). */
export function metresBetween(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return Math.round(2 * 6371008.8 * Math.asin(Math.min(1, Math.sqrt(h))));
}
