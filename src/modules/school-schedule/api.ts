/**
 * The school-schedule module's face: what other modules may use of it. Everything else in this
 * folder is the module's own.
 */

export {
  type Calendar,
  type Cycle,
  calendarOf,
  calendarReads,
  type DayOff,
  DayOffReason,
  dayOff,
  isHoliday,
  type RouteOff,
  RouteOffReason,
  routeOff,
  routeOffMessage,
  type ScheduleRow,
  type School,
} from "./calendar";
export { changeDeadline } from "./deadline";
export { type ScheduledTime, type ScheduleOn, scheduleOn } from "./service";
