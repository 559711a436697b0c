// The one e-mail rule: what the accounts (sign-up, users), a payment link's e-mail field and a payer's receipt
// request accept as an e-mail address.

/** The shape an e-mail address must have (one @, a dot in the domain, no spaces). */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
