// One request of a command-line script to a running API (scripts/token.mjs, scripts/school-move.mjs):
// its status, headers, the body parsed as JSON where it is JSON, and the text. A server that cannot
// be reached throws an Error whose message says so and how to start one (`hint`: where the script
// takes its address from).
export async function callApi(api, method, path, { body, token, hint } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(`${api}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new Error(`no API at ${api} (${err.cause?.code ?? err.message}). Start it with \`npm run dev\`, ${hint}.`);
  }
  const text = await res.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  return { status: res.status, headers: res.headers, data, text };
}
