/**
 * TypeBox string formats, restored after @elysiajs/openapi replaced them. On import, that plugin
 * registers `uuid`, `email` and other formats as checks that build a new Zod schema on every call
 * (measured: ~25 µs and a few KB of garbage per checked value — every request with an id in its path).
 * The same patterns (Zod's own, so exactly the same values pass) are registered here as plain regexes.
 */
import "@elysiajs/openapi";
import { FormatRegistry } from "@sinclair/typebox";

/** Zod 4's `uuid()`: RFC 9562 versions 1–8 with the RFC variant, plus the nil and max UUIDs. */
const UUID =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;
/** Zod 4's `email()`. */
const EMAIL = /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

FormatRegistry.Set("uuid", (value) => UUID.test(value));
FormatRegistry.Set("email", (value) => EMAIL.test(value));
