// A schedule's rule in words (docs/web.md "Expected"): the form's choices → the
// RFC 5545 rule the API takes, and back, and the words a person reads. The dates a
// rule gives are never computed here: the API's GET /schedules/preview gives them.
//
// A choice is one of four shapes:
//   {repeat: "month", every, day}        every month on the 1st (day -1: the last day)
//   {repeat: "year", day, month}         every year on 31 January
//   {repeat: "weekday", nth, weekday}    the last Friday of each month (nth 1 to 4, -1)
//   {repeat: "week", every, weekday}     every two weeks on Monday

export const WEEKDAYS = [
  ["MO", "Monday"], ["TU", "Tuesday"], ["WE", "Wednesday"], ["TH", "Thursday"],
  ["FR", "Friday"], ["SA", "Saturday"], ["SU", "Sunday"],
];
export const MONTHS = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];
export const NTH = [[1, "first"], [2, "second"], [3, "third"], [4, "fourth"], [-1, "last"]];
const COUNTS = ["", "", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
export const EVERY_MAX = 12;

// 1 → "1st", 22 → "22nd", 13 → "13th".
export function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${["th", "st", "nd", "rd"][n % 10] ?? "th"}`;
}

const dayWords = (day) => (day === -1 ? "the last day" : `the ${ordinal(day)}`);
const everyWords = (every, unit) => (every === 1 ? `every ${unit}` : `every ${COUNTS[every] ?? every} ${unit}s`);
const weekdayName = (code) => WEEKDAYS.find(([c]) => c === code)?.[1] ?? code;
const nthName = (n) => NTH.find(([k]) => k === n)?.[1] ?? String(n);

function checkedChoice(choice) {
  const int = (v) => Number.isInteger(v);
  const every = choice.every ?? 1;
  const okEvery = int(every) && every >= 1 && every <= EVERY_MAX;
  const okDay = int(choice.day) && ((choice.day >= 1 && choice.day <= 31) || choice.day === -1);
  const okWeekday = WEEKDAYS.some(([c]) => c === choice.weekday);
  switch (choice.repeat) {
    case "month": return okEvery && okDay;
    case "year": return okDay && choice.day !== -1 && int(choice.month) && choice.month >= 1 && choice.month <= 12;
    case "weekday": return okWeekday && NTH.some(([k]) => k === choice.nth);
    case "week": return okEvery && okWeekday;
    default: return false;
  }
}

// The choice → an RFC 5545 rule ("FREQ=MONTHLY;BYMONTHDAY=1"); null for a choice
// the form cannot make.
export function ruleOf(choice) {
  if (!choice || !checkedChoice(choice)) return null;
  const interval = (choice.every ?? 1) > 1 ? `;INTERVAL=${choice.every}` : "";
  switch (choice.repeat) {
    case "month": return `FREQ=MONTHLY${interval};BYMONTHDAY=${choice.day}`;
    case "year": return `FREQ=YEARLY;BYMONTH=${choice.month};BYMONTHDAY=${choice.day}`;
    case "weekday": return `FREQ=MONTHLY;BYDAY=${choice.nth}${choice.weekday}`;
    case "week": return `FREQ=WEEKLY${interval};BYDAY=${choice.weekday}`;
    default: return null;
  }
}

// The choice in words: "every month on the 1st", "every year on 31 January", "the last
// Friday of each month", "every two weeks on Monday".
export function wordsOf(choice) {
  if (!choice || !checkedChoice(choice)) return "";
  const every = choice.every ?? 1;
  switch (choice.repeat) {
    case "month": return `${everyWords(every, "month")} on ${dayWords(choice.day)}`;
    case "year": return `every year on ${choice.day} ${MONTHS[choice.month - 1]}`;
    case "weekday": return `the ${nthName(choice.nth)} ${weekdayName(choice.weekday)} of each month`;
    case "week": return `${everyWords(every, "week")} on ${weekdayName(choice.weekday)}`;
    default: return "";
  }
}

// A stored rule → the choice that makes it, or null when the form cannot make it (a
// rule written over the API: COUNT, UNTIL, several days, ...).
export function choiceOf(rrule) {
  if (typeof rrule !== "string") return null;
  const parts = new Map();
  for (const part of rrule.trim().toUpperCase().split(";")) {
    const [name, value, extra] = part.split("=");
    if (!name || value === undefined || extra !== undefined || parts.has(name)) return null;
    parts.set(name, value);
  }
  const num = (name) => (/^-?\d{1,3}$/.test(parts.get(name) ?? "") ? Number(parts.get(name)) : NaN);
  const only = (...names) => [...parts.keys()].every((k) => names.includes(k));
  const every = parts.has("INTERVAL") ? num("INTERVAL") : 1;
  let choice = null;
  const freq = parts.get("FREQ");
  if (freq === "MONTHLY" && parts.has("BYMONTHDAY") && only("FREQ", "INTERVAL", "BYMONTHDAY")) {
    choice = { repeat: "month", every, day: num("BYMONTHDAY") };
  } else if (freq === "YEARLY" && only("FREQ", "BYMONTH", "BYMONTHDAY")) {
    choice = { repeat: "year", day: num("BYMONTHDAY"), month: num("BYMONTH") };
  } else if (freq === "MONTHLY" && parts.has("BYDAY") && only("FREQ", "BYDAY")) {
    const found = /^(-?\d)([A-Z]{2})$/.exec(parts.get("BYDAY"));
    if (found) choice = { repeat: "weekday", nth: Number(found[1]), weekday: found[2] };
  } else if (freq === "WEEKLY" && parts.has("BYDAY") && only("FREQ", "INTERVAL", "BYDAY")) {
    choice = { repeat: "week", every, weekday: parts.get("BYDAY") };
  }
  return choice && checkedChoice(choice) ? choice : null;
}

// A stored rule in words; one the form cannot make is named as such (never shown as
// rule text to read).
export function ruleWords(rrule) {
  const choice = choiceOf(rrule);
  return choice ? wordsOf(choice) : "a rule set over the API";
}

// The weekend rule in words.
export const WEEKEND_WORDS = {
  none: "keep the date",
  before: "the Friday before",
  after: "the Monday after",
};

// A date `days` after (or before) an ISO date, by the browser's calendar in UTC (the
// match picker's window around a due date): 2026-03-01, -10 → 2026-02-19.
export function addDays(iso, days) {
  const [y, m, d] = iso.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

// Days from one ISO date to another (the forecast chart's x axis).
export function daysBetween(from, to) {
  const utc = (iso) => {
    const [y, m, d] = iso.split("-").map(Number);
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((utc(to) - utc(from)) / 86400000);
}

// The dues lines: one member per line, trimmed, inner spaces collapsed, blank lines
// dropped. A name given twice stays twice: the API refuses the second schedule (its
// name is taken), and the page says so on that line.
export function memberLines(text) {
  return String(text ?? "").split(/\r?\n/).map((raw) => raw.trim().replace(/\s+/g, " ")).filter(Boolean);
}
