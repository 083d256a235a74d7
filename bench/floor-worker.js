/**
 * The floor: the least a Worker can do to answer a documents page. No framework, no auth, no
 * validation, no JSON shaping: one D1 query and `Response.json`. Every API endpoint is compared
 * with it, so the ratio shows what the framework and our code cost on top of the same D1 work.
 */
const PAGE =
  "SELECT id, name, slug, created_at, updated_at FROM document WHERE school_id = ? ORDER BY created_at, id LIMIT 20";

export default {
  async fetch(_request, env) {
    const { results } = await env.DB.prepare(PAGE).bind(1).all();
    return Response.json({ items: results });
  },
};
