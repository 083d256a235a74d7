/** The bulk queue's name (wrangler.toml): kept apart so the registry need not load the consumer. */
export const BULK_QUEUE = "school-bulk";
