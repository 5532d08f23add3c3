// Money as people type it → integer cents, by string arithmetic only (docs/web.md
// "Money entry rules"). No floating point
// touches an amount: the digits are checked with a pattern and joined as text.
//
// Accepted (after trimming spaces):
//   - an optional leading currency sign ($, £, €, ¥), optionally followed by spaces;
//   - whole dollars as plain digits ("1234") or with commas between groups of
//     three ("1,234,567"); the first group has 1–3 digits;
//   - optionally a point and one or two digits of cents ("12.5" = 1250, "0.07" = 7).
// Refused, with a message, and never rounded:
//   - more than two decimal places ("1.234", even "1.230");
//   - a comma anywhere but between thousands ("1,23", "12,5" — a decimal comma
//     would otherwise silently become a hundred times the amount);
//   - any sign ("-5", "+5"): the direction is chosen by money in / money out /
//     transfer, never by the amount;
//   - zero: there is nothing to record;
//   - a point without digits on either side (".5", "5."), other characters,
//     empty text, and amounts beyond 15 digits of cents.

export class AmountError extends Error {
  constructor(message) {
    super(message);
    this.name = "AmountError";
  }
}

const CURRENCY = /^[$£€¥]\s*/u;
const SIGN = /^[$£€¥]?\s*[-+\u2212]/u;
const NUMBER = /^([\d,]+)(?:\.(\d+))?$/;
const THOUSANDS = /^\d{1,3}(?:,\d{3})+$/;
// 15 digits of cents stay exact in a JavaScript number and in signed 64-bit.
const MAX_CENT_DIGITS = 15;

export function parseDollars(text) {
  const raw = typeof text === "string" ? text.trim() : "";
  if (raw === "") throw new AmountError("Enter an amount.");
  if (SIGN.test(raw)) {
    throw new AmountError(
      "Enter the amount without a sign; choose money in, money out or transfer for its direction.",
    );
  }
  const match = NUMBER.exec(raw.replace(CURRENCY, ""));
  if (!match || !/^\d/.test(match[1])) {
    throw new AmountError("Write the amount as digits with up to two decimals, like 1,234.50.");
  }
  const [, wholeText, decimals = ""] = match;
  if (wholeText.includes(",") && !THOUSANDS.test(wholeText)) {
    throw new AmountError(
      "Commas may only separate thousands (1,234.50); write cents after a point.",
    );
  }
  if (decimals.length > 2) {
    throw new AmountError("Amounts are recorded to the cent: use at most two decimal places.");
  }
  const digits = (wholeText.replaceAll(",", "") + decimals.padEnd(2, "0")).replace(/^0+/, "");
  if (digits === "") throw new AmountError("The amount must be more than zero.");
  if (digits.length > MAX_CENT_DIGITS) throw new AmountError("That amount is too large.");
  return Number(digits);
}

// Cents → "1,234.50" (with "-" in front of a negative figure), also by string
// arithmetic. Figures are shown exactly as the API gives them: never negated.
export function formatCents(cents) {
  if (!Number.isSafeInteger(cents)) throw new TypeError(`not integer cents: ${cents}`);
  const negative = cents < 0;
  const digits = String(Math.abs(cents)).padStart(3, "0");
  const whole = digits.slice(0, -2).replace(/\B(?=(\d{3})+$)/g, ",");
  return `${negative ? "-" : ""}${whole}.${digits.slice(-2)}`;
}

// Cents → the text a person would type back ("1234.5" → "1234.50"), for editing.
export function centsToInput(cents) {
  return formatCents(cents).replaceAll(",", "");
}
