/**
 * The glossary of the OpenAPI document: descriptions of field names that mean the same wherever
 * they appear (`firstName`, `postalCode`, a `studentId`), applied to every property and parameter
 * the document's schemas leave undescribed. A field whose meaning depends on where it is (`name`,
 * `status`, `date`) is described on its own schema (`.openapi({ description })`), which always
 * wins; test/openapi-descriptions.test.ts names every field that has neither.
 *
 * An `<x>Id` field is "The <x>'s id" (`trustedPersonId`: "The trusted person's id") unless the
 * glossary or its schema says more.
 *
 * A field that is a named schema (`user: UserSchema`) is described by that schema's own description
 * (`.openapi("User", { description })`): the generator drops a description written beside a
 * reference in some orders of generation, so none is asked for there.
 */

export const FIELD_DESCRIPTIONS: Readonly<Record<string, string>> = {
  id: "The record's id",
  createdAt: "When the record was created (UTC)",
  updatedAt: "When the record last changed (UTC)",
  // People
  firstName: "First name, as this school knows the person",
  lastName: "Last name, as this school knows the person",
  email: "Email address",
  phone: "Mobile phone number in E.164 (+15550000002)",
  language: "Preferred language of messages: es or en",
  relationship: "How the person is related to the student",
  familyNumber: "The family's number, unique in the school whatever its case or accents",
  employeeNumber: "The school's employee number",
  idNumber: "The school's enrolment number of the student",
  studentName: "The student's first and last name",
  trustedPersonName: "The trusted person's name",
  schoolYear: "The school year, e.g. 2026-2027",
  level: "The school level: preschool, elementary, middle or high",
  // Addresses
  street: "Street name",
  number: "House or building number",
  neighborhood: "Neighborhood or district",
  city: "City",
  state: "State or province",
  country: "Country",
  postalCode: "Postal code",
  latitude: "Latitude in decimal degrees (WGS 84)",
  longitude: "Longitude in decimal degrees (WGS 84)",
  // Transport
  routeName: "The route's name",
  stopName: "The stop's name",
  stopPosition: "The stop's place on its route, from 1",
  plate: "The vehicle's licence plate",
  vehicleSeats: "Seats of the route's vehicle",
  driverName: "The driver's name",
  driverPhone: "The driver's phone number in E.164",
  weekdays: "ISO weekdays, 1 (Monday) to 7 (Sunday)",
  weekday: "An ISO weekday, 1 (Monday) to 7 (Sunday)",
  direction: "to_school (the morning run) or home (the afternoon run)",
  // Decisions and answers
  decidedAt: "When the school confirmed or rejected it; null while pending",
  decidedBy: "The user who confirmed or rejected it; null while pending",
  decisionReason: "Why the school decided so, as it told the family; null if it gave none",
  answeredAt: "When the answer was given; null while pending",
  answeredBy: "The user who answered; null while pending",
  respondedAt: "When the answer was given; null while pending",
  respondedBy: "The user who answered; null while pending",
  askedBy: "The user who asked",
  // Who and when, on any record
  createdBy: "The user who created it; null if that user's account was removed",
  cancelledAt: "When it was cancelled (UTC); null unless cancelled",
  cancelledBy: "The user who cancelled it; null unless cancelled, or if that account was removed",
  startsAt: "When it starts: an instant in UTC",
  endsAt: "When it ends: an instant in UTC",
  sentAt: "When it was sent (UTC); null until then",
  // Platform
  refreshToken: "The refresh token a sign-in gave (rotates at every refresh)",
  platform: "The app's platform: ios or android",
};

/** `trustedPerson` -> "trusted person". */
const words = (camel: string) => camel.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();

/** The glossary's description of a field name, if it has one. */
export function glossaryDescription(name: string): string | undefined {
  if (Object.hasOwn(FIELD_DESCRIPTIONS, name)) return FIELD_DESCRIPTIONS[name];
  const id = /^([a-z][A-Za-z]*)Id$/.exec(name);
  return id?.[1] ? `The ${words(id[1])}'s id` : undefined;
}

type Node = { [key: string]: unknown };
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);

/** Describes, in place, the undescribed properties below a schema that the glossary knows. */
function describeSchema(schema: unknown): void {
  if (!isNode(schema) || "$ref" in schema) return;
  const properties = schema.properties;
  if (isNode(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      if (!isNode(property)) continue;
      const known = property.description === undefined ? glossaryDescription(name) : undefined;
      // A $ref's siblings are allowed in OpenAPI 3.1: the description says what the reference is here.
      if (known) property.description = known;
      describeSchema(property);
    }
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) describeSchema(b);
  }
  describeSchema(schema.items);
  describeSchema(schema.additionalProperties);
}

/**
 * Applies the glossary to a generated OpenAPI document (in place): every named schema, every schema
 * written inline in an operation, and every parameter without a description.
 */
export function describeFields(document: { paths?: unknown; components?: unknown }): void {
  const components = isNode(document.components) ? document.components : {};
  if (isNode(components.schemas)) for (const schema of Object.values(components.schemas)) describeSchema(schema);
  if (!isNode(document.paths)) return;
  for (const item of Object.values(document.paths)) {
    if (!isNode(item)) continue;
    for (const op of Object.values(item)) {
      if (!isNode(op)) continue;
      if (Array.isArray(op.parameters)) {
        for (const p of op.parameters) {
          if (!isNode(p) || p.description !== undefined) continue;
          const schema = isNode(p.schema) ? p.schema : {};
          const known = typeof p.name === "string" && !schema.description ? glossaryDescription(p.name) : undefined;
          if (known) p.description = known;
        }
      }
      const body = isNode(op.requestBody) && isNode(op.requestBody.content) ? op.requestBody.content : {};
      for (const media of Object.values(body)) if (isNode(media)) describeSchema(media.schema);
      const responses = isNode(op.responses) ? op.responses : {};
      for (const response of Object.values(responses)) {
        if (!isNode(response) || !isNode(response.content)) continue;
        for (const media of Object.values(response.content)) if (isNode(media)) describeSchema(media.schema);
      }
    }
  }
}
