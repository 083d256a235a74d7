import { definePermissions, STAFF } from "../../lib/access";

/**
 * Every member may browse the found articles and claim one as theirs (a parent for their child; a
 * teacher or staff member their own), and cancel their claim; staff record, change, deliver, donate
 * and remind.
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
    description: "Claim a found article as one's own (or one's child's), and cancel one's own claim",
    grants: [...STAFF, "teacher", "parent"],
  },
  manage: {
    id: 127,
    name: "lost-article.manage",
    description: "Record, change, deliver, donate and delete lost articles, remind claimants and schedule reminders",
    grants: STAFF,
  },
});
