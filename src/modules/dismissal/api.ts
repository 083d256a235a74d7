/**
 * What the dismissal module offers outside itself: the live board's Durable Object class (the
 * Worker entries export it as `DismissalLive`, wrangler.toml binds it as `DISMISSAL_LIVE`).
 */
export { dismissalLiveObject } from "./hub";
