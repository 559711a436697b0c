// One statement assembled from parts that each bring their own parameters: a use case that writes to
// several modules' tables (a payout, its journal entries, its event) does it in one round trip, while
// each module keeps its own SQL. A part asks for a placeholder with p(value) and gets "$n".

export class Statement {
  readonly params: unknown[] = [];

  /** Adds a parameter and returns its placeholder, with a cast when given ("uuid[]", "bigint[]"). */
  p(value: unknown, cast?: string): string {
    this.params.push(value);
    return cast ? `$${this.params.length}::${cast}` : `$${this.params.length}`;
  }
}
