// book_style switches the words, never the figures (docs/web.md "Pages").
export const VOCAB = {
  personal: {
    title: "My books",
    kinds: {
      asset: "What I have",
      liability: "What I owe",
      equity: "Opening balances",
      income: "Income",
      expense: "Spending",
    },
    modes: { in: "Money in", out: "Money out", transfer: "Transfer" },
    from: { in: "Income from", out: "Paid from", transfer: "From" },
    to: { in: "Received into", out: "Spent on", transfer: "To" },
    incomeStatement: "Income and spending",
    balanceSheet: "What I have and owe",
    income: "Income",
    expenses: "Spending",
    net: "Left over",
    assets: "What I have",
    liabilities: "What I owe",
    equity: "Opening balances",
    retained: "Saved from income",
    totalEquity: "Net worth",
    totalIncome: "Total income",
    totalExpenses: "Total spending",
    totalAssets: "Total I have",
    totalLiabilities: "Total I owe",
  },
  club: {
    title: "Club accounts",
    kinds: {
      asset: "Funds and assets",
      liability: "Liabilities",
      equity: "Reserves",
      income: "Income",
      expense: "Expenditure",
    },
    modes: { in: "Money received", out: "Payment", transfer: "Transfer" },
    from: { in: "Income category", out: "Paid from", transfer: "From" },
    to: { in: "Paid into", out: "Expenditure category", transfer: "To" },
    incomeStatement: "Income and expenditure",
    balanceSheet: "Balance sheet",
    income: "Income",
    expenses: "Expenditure",
    net: "Surplus (deficit)",
    assets: "Assets",
    liabilities: "Liabilities",
    equity: "Reserves",
    retained: "Accumulated surplus",
    totalEquity: "Total funds",
    totalIncome: "Total income",
    totalExpenses: "Total expenditure",
    totalAssets: "Total assets",
    totalLiabilities: "Total liabilities",
  },
};

export const KINDS = ["asset", "liability", "equity", "income", "expense"];

export function words(style) {
  return VOCAB[style] ?? VOCAB.personal;
}

// Fill every element marked data-vocab="key.path" with the style's wording.
export function applyVocab(root, style) {
  const w = words(style);
  for (const el of root.querySelectorAll("[data-vocab]")) {
    const text = el.dataset.vocab.split(".").reduce((node, key) => node?.[key], w);
    if (typeof text === "string") el.textContent = text;
  }
}
