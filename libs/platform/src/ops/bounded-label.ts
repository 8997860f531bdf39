/** The label value that stands for every value past a {@link BoundedLabel}'s limit. */
export const OTHER_LABEL = '_other';

/** Label values are cut to this many characters. */
const MAX_LABEL_CHARS = 128;

const cut = (value: string): string => (value.length > MAX_LABEL_CHARS ? value.slice(0, MAX_LABEL_CHARS) : value);

/**
 * Keeps a label's cardinality bounded: the first `limit` distinct values are kept as they are,
 * later ones all become {@link OTHER_LABEL}. Values are cut to 128 characters.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly limit: number) {}

  /** `value` as the label value to use. */
  of(value: string): string {
    const v = cut(value);
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.limit) return OTHER_LABEL;
    this.seen.add(v);
    return v;
  }
}

/**
 * A label whose values belong to tenants (workflow ids), bounded per tenant and in all: each
 * tenant keeps its first `perTenant` distinct values, and the process its first `limit` over
 * every tenant; a value past either bound becomes {@link OTHER_LABEL}. So a tenant publishing
 * thousands of workflows folds them into `_other` and leaves the other tenants' slots alone.
 * Values are cut to 128 characters.
 */
export class TenantBoundedLabel {
  private readonly byTenant = new Map<string, Set<string>>();
  private total = 0;

  constructor(
    private readonly perTenant: number,
    private readonly limit: number,
  ) {}

  /** `value` of `tenantId` as the label value to use. */
  of(tenantId: string, value: string): string {
    const v = cut(value);
    let mine = this.byTenant.get(tenantId);
    if (mine?.has(v)) return v;
    if ((mine?.size ?? 0) >= this.perTenant || this.total >= this.limit) return OTHER_LABEL;
    if (!mine) this.byTenant.set(tenantId, (mine = new Set()));
    mine.add(v);
    this.total++;
    return v;
  }
}
