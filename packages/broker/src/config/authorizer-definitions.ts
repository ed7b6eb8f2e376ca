/** Authorizer broker configs (`authorizer.class.name`, `super.users`, …), spread into BROKER_CONFIGS. */
import type { ConfigDef } from './types.js';

export const AUTHORIZER_CONFIGS = {} as const satisfies Record<string, ConfigDef>;
