/**
 * Lost and found: `/api/v1/lost-article` (articles, their categories and statuses, claims, delivery,
 * donation, reminding the claimant, the photo) and `/api/v1/lost-article-reminder` (reminders before
 * the donation date, sent by the 5-minute sweep).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "lost-article",
  paths: ["/api/v1/lost-article", "/api/v1/lost-article-reminder"],
  permissions,
  load: async () => {
    const [r, a, rem] = await Promise.all([import("./resource"), import("./actions"), import("./reminders")]);
    // The fixed sub-paths before `{id}`: `/categories`, `/statuses`, `/mine` are not ids.
    return {
      operations: [
        r.listLostArticleCategoriesOperation,
        r.listLostArticleStatusesOperation,
        r.listMyLostArticlesOperation,
        r.listLostArticles,
        r.createLostArticleOperation,
        r.getLostArticle,
        r.updateLostArticleOperation,
        r.deleteLostArticle,
        a.claimLostArticle,
        a.cancelLostArticleClaim,
        a.deliverLostArticle,
        a.donateLostArticleOperation,
        a.remindLostArticleOperation,
        a.createLostArticleSignedUrlOperation,
        rem.createLostArticleReminderOperation,
        rem.deleteLostArticleReminder,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "send-lost-article-reminders",
      run: async (deps) => (await import("./reminders")).sendDueLostArticleReminders(deps),
    },
  ],
});
