/** A dismissal verb's refusal: a 422 listing every reason, each `{code, message, ...facts}` and as a field error. */
import { ApiError } from "../../lib/errors";
import { joinMessages, type Message } from "../../lib/message";

export interface Failure {
  code: string;
  message: Message;
  /** The field it is about (`studentIds.0`, `position`, `collector`). */
  path: string;
  [fact: string]: unknown;
}

export function refusal(failures: readonly Failure[]): ApiError {
  return new ApiError(
    422,
    joinMessages(
      failures.map((f) => f.message),
      "; ",
    ),
    {
      errors: failures.map((f) => ({ path: f.path, message: f.message })),
      members: { failures: failures.map(({ path: _path, ...rest }) => rest) },
    },
  );
}
