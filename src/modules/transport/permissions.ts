import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 80, name: "transport.read", description: "List and read the school's vehicles", grants: STAFF },
  write: {
    id: 81,
    name: "transport.write",
    description: "Create, update and delete vehicles",
    grants: STAFF,
  },
  routeRead: {
    id: 82,
    name: "route.read",
    description: "List and read routes and their stops (a driver: the routes of their vehicles)",
    grants: [...STAFF, "teacher", "driver"],
  },
  routeWrite: { id: 83, name: "route.write", description: "Create, update and delete routes", grants: STAFF },
  run: {
    id: 171,
    name: "route.run",
    description:
      "Run a route: start and finish its day's run, record boardings, drops and positions (a driver: their vehicles' routes)",
    grants: [...STAFF, "driver"],
  },
  routeFamily: {
    id: 84,
    name: "route.family",
    description: "See the routes, stops and times of one's own children",
    // Staff hold it too: whoever gives the parent role must hold what it grants.
    grants: [...STAFF, "parent"],
  },
});
