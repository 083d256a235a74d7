/**
 * What other modules may use of route students: the permissions, the weekday helpers and the reader
 * of weekdays as a spreadsheet writes them (the bulk import of route students).
 */
export { permissions } from "./permissions";
export { dayList, daysOf, maskOf, parseWeekdays, WEEKDAY_NAMES } from "./weekdays";
