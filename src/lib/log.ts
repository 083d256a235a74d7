/**
 * One logger: a JSON line per event, with the fields that say where it happened (request id,
 * actor, school, queue, job). Workers Logs (`[observability]`) indexes these fields.
 */
export type LogFields = Record<string, unknown>;

function write(level: "info" | "warn" | "error", message: string, fields: LogFields) {
  const line = JSON.stringify({ level, message, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

export const log = {
  info: (message: string, fields: LogFields = {}) => write("info", message, fields),
  warn: (message: string, fields: LogFields = {}) => write("warn", message, fields),
  error: (message: string, fields: LogFields = {}) => write("error", message, fields),
};

/** An error as log fields: its class and message, and the top of its stack (never sent to clients). */
export function errorFields(err: unknown): LogFields {
  const e = err instanceof Error ? err : new Error(String(err));
  return { error: e.name, detail: e.message, stack: e.stack?.split("\n").slice(0, 6).join(" | ") };
}
