// Receipts: the documents attached to a posting (docs/ledger.md, "Receipts").
// The pages hook in with a few lines each:
//   books and register rows  receiptCell(tx, onChange): a paperclip with the count
//                            that opens the documents in place (list, download,
//                            attach from a file or the phone's camera, remove)
//   books filter             mountReceiptFilter(form, onChange) + withoutReceipt(items)
//   (an edit posts its correction with `replaces`: the server moves the documents)
//   reports                  mountAuditPack(section): the audit pack download
import { API_ORIGIN } from "/config.js";
import { api, ApiError, orSignIn } from "./api.js";
import { busy, h, say, today } from "./dom.js";
import { saveBlob } from "./download.js";

export const ACCEPT = "image/*,application/pdf";

// "1.2 MB", "34 KB", "512 bytes".
export function formatSize(bytes) {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${Math.round(bytes / 1_000)} KB`;
  return `${bytes} bytes`;
}

// The paperclip's text: "2", or "—" for a posting without a document (the icon is
// drawn beside it: paperclip()).
export function clipLabel(count) {
  return count > 0 ? String(count) : "—";
}

const SVG = "http://www.w3.org/2000/svg";

// A paperclip, drawn (no icon font or emoji needed, nothing fetched).
function paperclip() {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "clip-icon");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M21.4 11.1l-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5");
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", "currentColor");
  path.setAttribute("stroke-width", "2");
  path.setAttribute("stroke-linecap", "round");
  svg.append(path);
  return svg;
}

// Postings without a document, when the filter asks for them (else all).
export function withoutReceipt(items, only = receiptFilter.only) {
  return only ? items.filter((tx) => (tx.document_count ?? 0) === 0) : items;
}

const receiptFilter = { only: false };

// A checkbox "Without a receipt" in the listing's filter form.
export function mountReceiptFilter(form, onChange) {
  const box = h("input", { type: "checkbox", id: "tx-no-receipt" });
  box.addEventListener("change", () => {
    receiptFilter.only = box.checked;
    onChange();
  });
  const label = h("label", { class: "check", for: "tx-no-receipt" }, box, " Without a receipt");
  const submit = form.querySelector("button[type=submit]");
  form.insertBefore(label, submit);
  return box;
}

// Send one file (a File or Blob) to the transaction: the stored document, or ApiError.
export async function uploadDocument(txId, file) {
  const body = new FormData();
  body.append("file", file, file.name || "document");
  let response;
  try {
    response = await fetch(`${API_ORIGIN}/transactions/${txId}/documents`, {
      method: "POST",
      credentials: "include",
      body,
    });
  } catch {
    throw new ApiError(0, null);
  }
  let parsed = null;
  try {
    parsed = await response.json();
  } catch {
    parsed = null;
  }
  if (!response.ok) throw new ApiError(response.status, parsed, response.headers);
  return parsed;
}

export async function downloadDocument(doc) {
  const response = await orSignIn(api(`/documents/${doc.id}`, { raw: true }));
  saveBlob(await response.blob(), doc.filename);
}

// Shown in the page (issue 37): images and PDFs; anything else (HEIC) is downloaded.
export const viewable = (doc) => /^image\/(png|jpeg|webp|gif)$/.test(doc.content_type) || doc.content_type === "application/pdf";

// The document's bytes as a blob: URL for an <img> or an <iframe> (revoke when done).
async function documentUrl(doc) {
  const response = await orSignIn(api(`/documents/${doc.id}`, { raw: true }));
  const blob = await response.blob();
  return URL.createObjectURL(new Blob([blob], { type: doc.content_type }));
}

// A small picture of an image document (a PDF gets a plain "PDF" mark).
function thumbnail(doc) {
  if (!viewable(doc) || doc.content_type === "application/pdf") {
    const mark = doc.content_type === "application/pdf" ? "PDF" : "HEIC";
    return h("span", { class: "thumb pdf", "aria-hidden": "true" }, mark);
  }
  const img = h("img", { class: "thumb", alt: "", width: 48, height: 48 });
  documentUrl(doc).then((url) => {
    img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
    img.src = url;
  }).catch(() => img.remove());
  return img;
}

// The row's paperclip cell. tx: {id, document_count}; onChange(count) after an
// upload or a removal (the page may reload its list or keep the row).
/**
 * @param {{id: number, document_count?: number}} tx
 * @param {(count: number) => void} [onChange]
 */
export function receiptCell(tx, onChange = () => {}) {
  const state = { count: tx.document_count ?? 0, panel: null };
  const button = h("button", {
    type: "button",
    class: "link clip",
    "aria-expanded": "false",
    "aria-label": `Receipts: ${state.count}`,
  }, paperclip(), h("span", { class: "clip-count" }, clipLabel(state.count)));
  const cell = h("td", { class: "receipts", "data-label": "Receipts" }, button);
  const setCount = (count) => {
    state.count = count;
    tx.document_count = count; // the page's copy follows (the "without a receipt" filter)
    button.querySelector(".clip-count").textContent = clipLabel(count);
    button.setAttribute("aria-label", `Receipts: ${count}`);
  };
  button.addEventListener("click", () => {
    const row = cell.closest("tr");
    if (state.panel) {
      state.panel.remove();
      state.panel = null;
      button.setAttribute("aria-expanded", "false");
      return;
    }
    const columns = row.children.length;
    const holder = h("td", { colspan: columns, class: "receipts-panel" });
    state.panel = h("tr", { class: "receipts-row", "data-receipts-of": tx.id }, holder);
    row.after(state.panel);
    button.setAttribute("aria-expanded", "true");
    renderPanel(holder, tx.id, (count) => {
      setCount(count);
      onChange(count);
    });
  });
  return cell;
}

async function renderPanel(holder, txId, setCount) {
  const message = h("p", { class: "message", hidden: true });
  const list = h("ul", { class: "receipts-list" });
  const pick = (capture) => {
    const input = h("input", { type: "file", accept: ACCEPT, capture: capture || false, class: "sr-only", id: `receipt-${capture ? "camera" : "file"}-${txId}` });
    input.addEventListener("change", () => {
      const [file] = input.files;
      if (file) attach(file);
      input.value = "";
    });
    return input;
  };
  const fileInput = pick(false);
  const cameraInput = pick(true);
  const attachButton = h("label", { class: "button secondary", for: fileInput.id }, "Attach a file");
  const cameraButton = h("label", { class: "button secondary", for: cameraInput.id }, "Take a photo");
  const refresh = async () => {
    const docs = await orSignIn(api(`/transactions/${txId}/documents`));
    list.replaceChildren(...docs.map(docItem));
    if (docs.length === 0) list.append(h("li", { class: "hint" }, "No receipt yet."));
    setCount(docs.length);
  };
  const viewer = h("div", { class: "receipt-viewer", hidden: true });
  const closeViewer = () => {
    for (const el of viewer.querySelectorAll("[data-url]")) URL.revokeObjectURL(el.getAttribute("data-url"));
    viewer.replaceChildren();
    viewer.hidden = true;
  };
  // Open one document in the page: the picture, or the PDF in a frame, with Download.
  const show = async (doc) => {
    closeViewer();
    const download = h("button", { type: "button", class: "secondary" }, "Download");
    download.addEventListener("click", () => busy(download, () => downloadDocument(doc).catch((err) => say(message, err.message))));
    const close = h("button", { type: "button", class: "secondary" }, "Close");
    close.addEventListener("click", closeViewer);
    const url = await documentUrl(doc);
    const body = doc.content_type === "application/pdf"
      ? h("iframe", { src: url, "data-url": url, title: doc.filename, class: "receipt-pdf" })
      : h("img", { src: url, "data-url": url, alt: doc.filename, class: "receipt-image" });
    viewer.replaceChildren(h("figure", { "data-document": doc.id }, body,
      h("figcaption", {}, h("span", {}, doc.filename), download, close)));
    viewer.hidden = false;
  };
  const docItem = (doc) => {
    const get = h("button", { type: "button", class: "link doc-open" }, doc.filename);
    get.addEventListener("click", () => busy(get, () => (viewable(doc) ? show(doc) : downloadDocument(doc))
      .catch((err) => say(message, err.message))));
    const remove = h("button", { type: "button", class: "secondary" }, "Remove");
    remove.addEventListener("click", () => busy(remove, async () => {
      try {
        await orSignIn(api(`/documents/${doc.id}`, { method: "DELETE" }));
        await refresh();
        say(message, `Removed ${doc.filename}.`, "info");
      } catch (err) {
        say(message, err.message);
      }
    }));
    return h("li", { "data-document": doc.id },
      thumbnail(doc), get, " ", h("span", { class: "hint" }, `${formatSize(doc.size)} · ${doc.uploaded_at.slice(0, 10)}`), " ", remove);
  };
  const attach = async (file) => {
    say(message, `Sending ${file.name || "the photo"}…`, "info");
    try {
      const doc = await orSignIn(uploadDocument(txId, file));
      await refresh();
      say(message, `Attached ${doc.filename}.`, "info");
    } catch (err) {
      say(message, `Not attached: ${err.message}`);
    }
  };
  holder.replaceChildren(
    h("div", { class: "receipts-box" },
      list,
      viewer,
      h("div", { class: "receipts-actions" }, fileInput, attachButton, cameraInput, cameraButton),
      h("p", { class: "hint" }, "PDF, JPEG, PNG, WebP or HEIC, up to 10 MB."),
      message));
  try {
    await refresh();
  } catch (err) {
    say(message, err.message);
  }
}

// The audit pack on the reports view: the export window's dates, one zip. Left blank,
// the dates are the page's period (`period()`: {from, to}, "" when none is chosen, and
// then the whole books).
export function mountAuditPack(section, period = () => ({ from: "", to: "" })) {
  const out = h("p", { class: "message", hidden: true });
  const from = h("input", { type: "date", id: "pack-from" });
  const to = h("input", { type: "date", id: "pack-to" });
  const submit = h("button", { type: "submit", id: "pack-submit" }, "Download the audit pack");
  const form = h("form", { id: "pack-form", class: "downloads", novalidate: true },
    h("label", {}, "From ", from), h("label", {}, "To ", to), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    say(out, "");
    busy(submit, async () => {
      try {
        const own = from.value || to.value;
        const chosen = own ? { from: from.value, to: to.value } : period();
        const response = await orSignIn(api("/export", {
          raw: true,
          query: { format: "audit-pack", from: chosen.from, to: chosen.to },
        }));
        const name = `audit-pack-${today()}.zip`;
        saveBlob(await response.blob(), name);
        const what = chosen.from || chosen.to
          ? `${chosen.from || "the start"} to ${chosen.to || "the end"}`
          : "the whole books";
        say(out, `Downloaded ${name} (${what}).`, "info");
      } catch (err) {
        say(out, err.message);
      }
    });
  });
  section.append(
    h("h3", {}, "Audit pack"),
    h("p", { class: "hint" }, "One zip for the auditor: the period's CSV and hledger exports, every receipt, its reports, reconciled statements and audit trail, a README and a manifest of SHA-256 hashes. Leave the dates blank for the period chosen above."),
    form,
    out);
}
