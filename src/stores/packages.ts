import type { PackageRecord, PackageRegistry } from '../domain/ports.js';

/** A package registry with nothing installed (until the install feature provides the real one). */
export class EmptyPackageRegistry implements PackageRegistry {
  list(): PackageRecord[] {
    return [];
  }
  get(): PackageRecord | undefined {
    return undefined;
  }
}
