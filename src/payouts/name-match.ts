// Does the name a bank or network holds for an account match the name the merchant gave the recipient?
// A name enquiry (GhIPSS, MTN's account-holder lookup, Paystack's resolve) answers the registered name,
// often upper case, in another order, with middle names or initials the merchant left out. Paying a
// stranger is worse than asking the merchant to correct a name, so the rule is strict on substance and
// lenient on form: case, punctuation, order, titles and extra names do not matter; every word of the
// shorter name must appear in the longer one (an initial matches a word it starts), and at least two
// words must match when both names have two or more.

const TITLES = new Set(['MR', 'MRS', 'MS', 'MISS', 'DR', 'PROF', 'REV', 'ALHAJI', 'HAJIA', 'NANA', 'MADAM', 'SIR']);

export function nameWords(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z0-9 ]+/g, ' ')
    .split(/\s+/)
    .filter((word) => word !== '' && !TITLES.has(word));
}

const wordMatches = (word: string, among: string[]): boolean =>
  among.some(
    (other) =>
      other === word || (word.length === 1 && other.startsWith(word)) || (other.length === 1 && word.startsWith(other)),
  );

export function namesMatch(given: string, registered: string): boolean {
  const a = nameWords(given);
  const b = nameWords(registered);
  if (a.length === 0 || b.length === 0) return false;
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  if (!shorter.every((word) => wordMatches(word, longer))) return false;
  const fullWords = shorter.filter((word) => word.length > 1 && longer.includes(word)).length;
  return shorter.length < 2 ? fullWords >= 1 : fullWords >= 2 || (fullWords >= 1 && shorter.length === 2);
}
