/**
 * The transport module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */

export { familyRides, familyRoutes } from "./family";
export { permissions } from "./permissions";
export { mayRide, type RiderDays, ridesOn, suspendedOn, whyNotRider } from "./riders";
export { Direction, parseStops, RouteRecord, RouteStop, routeResource, type StopOut, stopsOf } from "./route";
export { schoolToday } from "./today";
export { TransportRecord, vehicleResource } from "./vehicle";
export { drivenBy, routeVisible } from "./visibility";
