/**
 * What other modules may use of route students: the permissions, the weekday helpers, the reader
 * of weekdays as a spreadsheet writes them and the seat rule (the bulk import of route students).
 */
export { permissions } from "./permissions";
export { seatsHold } from "./record";
export { dayList, daysOf, maskOf, parseWeekdays, WEEKDAY_NAMES } from "./weekdays";
