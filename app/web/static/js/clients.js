// How the web app names the application (OAuth client) behind a change or a token
// (docs/oauth.md, "Client names"). A client chooses its own name, so a third-party
// client is shown with what identifies it beside that name: a registered client
// (id dyn_...) with its id, a client ID metadata document client (id = the https URL
// of its document) with the document's host. First-party clients (every other id,
// such as svc-cli, "Ledger command line") are shown by name; their names are
// reserved, so no third-party client can carry one.
export function clientLabel(clientId, clientName) {
  const name = clientName || clientId;
  if (!name) return null;
  if (typeof clientId !== "string") return name;
  if (clientId.startsWith("https://")) {
    let host = clientId;
    try {
      host = new URL(clientId).host;
    } catch {
      // not a URL after all: show the id itself
    }
    return `${name} (${host})`;
  }
  if (clientId.startsWith("dyn_")) return `${name} (${clientId})`;
  return name;
}
