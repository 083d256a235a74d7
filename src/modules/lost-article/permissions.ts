import { definePermissions, STAFF } from "../../lib/access";

/**
 * Every member may browse the found articles; a parent claims one (and cancels their claim); staff
 * record, change, deliver, donate and remind.
 */
export const permissions = definePermissions({
  read: {
    id: 125,
    name: "lost-article.read",
    description: "Browse the found articles (and those one claimed), their categories and statuses",
    grants: [...STAFF, "teacher", "parent"],
  },
  claim: {
    id: 126,
    name: "lost-article.claim",
    description: "Claim a found article, and cancel one's own claim",
    grants: ["parent"],
  },
  manage: {
    id: 127,
    name: "lost-article.manage",
    description: "Record, change, deliver, donate and delete lost articles, remind claimants and schedule reminders",
    grants: STAFF,
  },
});
