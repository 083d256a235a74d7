import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 87,
    name: "route-availability.read",
    description: "Read the seats each route offers on a date (a driver: their routes')",
    grants: [...STAFF, "driver"],
  },
  write: {
    id: 88,
    name: "route-availability.write",
    description: "Override the seats a route offers on a date",
    grants: STAFF,
  },
  listRead: {
    id: 89,
    name: "route-list.read",
    description: "Read and download a route's final list for a date (a driver: their routes')",
    grants: [...STAFF, "driver"],
  },
  listWrite: {
    id: 90,
    name: "route-list.write",
    description: "Record who joins a route or is away from it on a date",
    grants: STAFF,
  },
});
