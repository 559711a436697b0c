// How a card that paid is named to people (the payer's receipt, both consoles): "Visa ending 4081".

/**
 * "Visa ending 4081": the brand as the provider names it (trimmed, capitalised); "Card ending 4081" when the
 * provider named no brand; null without the last four digits.
 */
export function cardLabel(brand: string | null | undefined, last4: string | null | undefined): string | null {
  if (!last4) return null;
  const name = brand?.trim();
  return name ? `${name.charAt(0).toUpperCase()}${name.slice(1)} ending ${last4}` : `Card ending ${last4}`;
}
