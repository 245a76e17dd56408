/**
 * zstd compression of many small texts (a stored run's record each), with one context kept for all of them
 * and each dictionary prepared once; and their decompression, the same way.
 *
 * Why: node:zlib's `zstdCompressSync` makes a new compression context for every call and loads the
 * dictionary into it again (hashing all of its bytes at the record's level): ~7–11 µs of a record of a few
 * hundred bytes, ~10 % of the main thread's time per webhook at 10 connections. The system's libzstd, reached
 * through `bun:ffi`, compresses the same record with a context it keeps and a dictionary it prepared once
 * (ZSTD_createCDict) in ~2.5 µs. The frames are ordinary zstd frames either way (node:zlib reads both), and
 * where libzstd does not load (another system, no libzstd1) node:zlib does the work as before.
 *
 * Reading is the mirror image: `zstdDecompressSync` makes a stream object, a context and a 64 KiB output
 * buffer for every record and loads the dictionary again, so a list page of 20 runs made ~2 MB of garbage
 * (a collection of the reader thread's heap every ~3 pages) and spent a quarter of its time there. The kept
 * decompression context, each dictionary prepared once (ZSTD_createDDict) and one kept output buffer do the
 * same work without either.
 *
 * One compressor and one decompressor per thread (a context is not shared between threads); a dictionary stays
 * prepared while it is among the PREPARED_DICTIONARIES used last (~70–120 KB each at level 6 for a 1–5 KB
 * dictionary to compress with; about its own size to decompress with).
 */
import type { Pointer } from "bun:ffi";
import { constants as zlibConstants, zstdCompressSync, zstdDecompressSync } from "node:zlib";

/** A dictionary's bytes and an id that names those bytes (the same id never names other bytes). */
export interface ZstdDictionary {
  id: string;
  bytes: Uint8Array;
}

export interface ZstdCompressor {
  /**
   * `text` as one zstd frame without its content size (the frame's end ends it), against `dictionary` when
   * given, after `prefix` bytes left zero at the start of the result (room for the caller's header).
   */
  compress(text: Uint8Array, dictionary?: ZstdDictionary, prefix?: number): Uint8Array;
  /** Which library does the work: "libzstd" (the system's, kept context) or "node:zlib". */
  readonly library: "libzstd" | "node:zlib";
}

export interface ZstdDecompressor {
  /** The content of one zstd frame (made against `dictionary` when given), decoded as UTF-8. */
  text(frame: Uint8Array, dictionary?: ZstdDictionary): string;
  /** Which library does the work: "libzstd" (the system's, kept context) or "node:zlib". */
  readonly library: "libzstd" | "node:zlib";
}

/** How many prepared dictionaries a compressor keeps (the least recently used one is freed first). */
export const PREPARED_DICTIONARIES = 16;

/** The output buffer node:zlib starts with: its default is its stream's output size, ~128 KiB a call. */
const NODE_CHUNK_BYTES = 4_096;

/**
 * A compressor at `level`; `native: false` never loads libzstd (tests compare both). It uses libzstd when the
 * system has version 1.4 or later (the advanced API used here is stable since), else node:zlib.
 */
export function zstdCompressor(level: number, options: { native?: boolean } = {}): ZstdCompressor {
  return (options.native !== false && nativeCompressor(level)) || nodeCompressor(level);
}

/** A decompressor; `native: false` never loads libzstd (tests compare both). libzstd when it loads, else node:zlib. */
export function zstdDecompressor(options: { native?: boolean } = {}): ZstdDecompressor {
  return (options.native !== false && nativeDecompressor()) || nodeDecompressor();
}

function nodeCompressor(level: number): ZstdCompressor {
  const params = { [zlibConstants.ZSTD_c_compressionLevel]: level, [zlibConstants.ZSTD_c_contentSizeFlag]: 0 };
  const plain = { chunkSize: NODE_CHUNK_BYTES, params };
  return {
    library: "node:zlib",
    compress(text, dictionary, prefix = 0) {
      const frame = zstdCompressSync(text, dictionary ? { ...plain, dictionary: dictionary.bytes } : plain);
      if (prefix === 0) return frame;
      const out = new Uint8Array(prefix + frame.byteLength);
      out.set(frame, prefix);
      return out;
    },
  };
}

function nodeDecompressor(): ZstdDecompressor {
  const decoder = new TextDecoder();
  const plain = { chunkSize: NODE_CHUNK_BYTES };
  return {
    library: "node:zlib",
    text: (frame, dictionary) => decoder.decode(zstdDecompressSync(frame, dictionary ? { ...plain, dictionary: dictionary.bytes } : plain)),
  };
}

/** libzstd's names of the library's file, most specific first (Linux, then macOS). */
const LIBRARY_NAMES = ["libzstd.so.1", "libzstd.so", "libzstd.1.dylib", "libzstd.dylib"];
/** ZSTD_cParameter and ZSTD_ResetDirective values (zstd.h, stable API). */
const ZSTD_C_COMPRESSION_LEVEL = 100;
const ZSTD_C_CONTENT_SIZE_FLAG = 200;
const ZSTD_RESET_SESSION_ONLY = 1;
/** ZSTD_ErrorCode of an output buffer too small for the frame's content (zstd_errors.h, stable). */
const ZSTD_ERROR_DST_SIZE_TOO_SMALL = 70;
/** The output buffer a decompressor keeps; a larger content gets a buffer of its own for that call. */
const KEPT_OUTPUT_BYTES = 64 * 1024;
/** The largest content a frame may decompress to (a record is far smaller; a corrupt frame must not take the memory). */
const MAX_CONTENT_BYTES = 1 << 30;

/** A number is a size; an error code is above 2^53 and comes back as a bigint (loadLibzstd). */
const ok = (code: number | bigint): code is number => typeof code === "number";

/**
 * Dictionaries prepared by `prepare`, by id, at most PREPARED_DICTIONARIES: the least recently used one is freed
 * (after `beforeFree`) when another is prepared. A run of records of one definition asks for the same one again
 * and again: that one is answered without touching the map.
 */
function preparedDictionaries(prepare: (dictionary: ZstdDictionary) => Pointer | null, free: (prepared: Pointer) => void, beforeFree: () => void) {
  const prepared = new Map<string, Pointer>();
  let newestId: string | undefined;
  return (dictionary: ZstdDictionary): Pointer => {
    const known = prepared.get(dictionary.id);
    if (known !== undefined) {
      if (dictionary.id !== newestId) {
        prepared.delete(dictionary.id);
        prepared.set(dictionary.id, known);
        newestId = dictionary.id;
      }
      return known;
    }
    const made = prepare(dictionary);
    if (!made) throw new Error("zstd could not prepare a dictionary (out of memory)");
    if (prepared.size >= PREPARED_DICTIONARIES) {
      const [oldestId, oldest] = prepared.entries().next().value as [string, Pointer];
      prepared.delete(oldestId);
      beforeFree();
      free(oldest);
    }
    prepared.set(dictionary.id, made);
    newestId = dictionary.id;
    return made;
  };
}

function nativeCompressor(level: number): ZstdCompressor | undefined {
  const zstd = loadLibzstd();
  if (!zstd) return undefined;
  const context = zstd.ZSTD_createCCtx();
  if (!context) return undefined;
  if (!ok(zstd.ZSTD_CCtx_setParameter(context, ZSTD_C_COMPRESSION_LEVEL, level)) || !ok(zstd.ZSTD_CCtx_setParameter(context, ZSTD_C_CONTENT_SIZE_FLAG, 0))) {
    zstd.ZSTD_freeCCtx(context);
    return undefined;
  }
  const preparedOf = preparedDictionaries(
    (dictionary) => zstd.ZSTD_createCDict(dictionary.bytes, dictionary.bytes.byteLength, level) as Pointer | null,
    (prepared) => zstd.ZSTD_freeCDict(prepared),
    // The context may still refer to the one freed: it refers to another one (or none) before its next frame.
    () => zstd.ZSTD_CCtx_refCDict(context, null),
  );
  // Frames are written here, then copied out at their size. A text whose bound is larger gets a buffer of its
  // own for that call: kept, one large record would hold that much memory for the thread's life.
  const out = new Uint8Array(64 * 1024);
  return {
    library: "libzstd",
    compress(text, dictionary, prefix = 0) {
      const bound = zstd.ZSTD_compressBound(text.byteLength) as number;
      const target = bound > out.byteLength ? new Uint8Array(bound) : out;
      const referred = zstd.ZSTD_CCtx_refCDict(context, dictionary ? preparedOf(dictionary) : null);
      const size = ok(referred) ? zstd.ZSTD_compress2(context, target, target.byteLength, text, text.byteLength) : referred;
      if (!ok(size)) {
        // A failed frame leaves the context mid-frame; it must start over before its next one.
        zstd.ZSTD_CCtx_reset(context, ZSTD_RESET_SESSION_ONLY);
        throw new Error(`zstd could not compress a record: ${zstd.ZSTD_getErrorName(size)}`);
      }
      const frame = new Uint8Array(prefix + (size as number));
      frame.set(target.subarray(0, size as number), prefix);
      return frame;
    },
  };
}

function nativeDecompressor(): ZstdDecompressor | undefined {
  const zstd = loadLibzstd();
  if (!zstd) return undefined;
  const context = zstd.ZSTD_createDCtx();
  if (!context) return undefined;
  // A prepared dictionary is used by one call at a time (no context keeps a reference to it): freed at once.
  const preparedOf = preparedDictionaries(
    (dictionary) => zstd.ZSTD_createDDict(dictionary.bytes, dictionary.bytes.byteLength) as Pointer | null,
    (prepared) => zstd.ZSTD_freeDDict(prepared),
    () => {},
  );
  const out = new Uint8Array(KEPT_OUTPUT_BYTES);
  const decoder = new TextDecoder();
  return {
    library: "libzstd",
    text(frame, dictionary) {
      const prepared = dictionary ? preparedOf(dictionary) : null;
      // Frames carry no content size (the compressor leaves it out): a content that does not fit is tried again
      // in a buffer four times larger.
      for (let target = out; ; target = new Uint8Array(target.byteLength * 4)) {
        const size = prepared
          ? zstd.ZSTD_decompress_usingDDict(context, target, target.byteLength, frame, frame.byteLength, prepared)
          : zstd.ZSTD_decompressDCtx(context, target, target.byteLength, frame, frame.byteLength);
        if (ok(size)) return decoder.decode(target.subarray(0, size));
        if (zstd.ZSTD_getErrorCode(size) !== ZSTD_ERROR_DST_SIZE_TOO_SMALL || target.byteLength * 4 > MAX_CONTENT_BYTES)
          throw new Error(`zstd could not decompress a record: ${zstd.ZSTD_getErrorName(size)}`);
      }
    },
  };
}

/** This thread's libzstd, opened once: each dlopen through bun:ffi compiles its functions' trampolines again. */
let libzstd: { library: ReturnType<typeof openLibzstd> } | undefined;
function loadLibzstd() {
  libzstd ??= { library: openLibzstd() };
  return libzstd.library;
}

/** libzstd's functions this module calls; undefined when the library or bun:ffi is not there. */
function openLibzstd() {
  let ffi: typeof import("bun:ffi");
  try {
    ffi = require("bun:ffi");
  } catch {
    return undefined;
  }
  const { FFIType: T } = ffi;
  // Sizes and error codes come back as numbers; an error code is above 2^53, so it comes back as a bigint.
  const symbols = {
    ZSTD_versionNumber: { args: [], returns: T.u32 },
    ZSTD_createCCtx: { args: [], returns: T.ptr },
    ZSTD_freeCCtx: { args: [T.ptr], returns: T.u64_fast },
    ZSTD_CCtx_setParameter: { args: [T.ptr, T.i32, T.i32], returns: T.u64_fast },
    ZSTD_CCtx_reset: { args: [T.ptr, T.i32], returns: T.u64_fast },
    ZSTD_createCDict: { args: [T.ptr, T.u64, T.i32], returns: T.ptr },
    ZSTD_freeCDict: { args: [T.ptr], returns: T.u64_fast },
    ZSTD_CCtx_refCDict: { args: [T.ptr, T.ptr], returns: T.u64_fast },
    ZSTD_compress2: { args: [T.ptr, T.ptr, T.u64, T.ptr, T.u64], returns: T.u64_fast },
    ZSTD_compressBound: { args: [T.u64], returns: T.u64_fast },
    ZSTD_getErrorName: { args: [T.u64], returns: T.cstring },
    ZSTD_getErrorCode: { args: [T.u64], returns: T.i32 },
    ZSTD_createDCtx: { args: [], returns: T.ptr },
    ZSTD_createDDict: { args: [T.ptr, T.u64], returns: T.ptr },
    ZSTD_freeDDict: { args: [T.ptr], returns: T.u64_fast },
    ZSTD_decompressDCtx: { args: [T.ptr, T.ptr, T.u64, T.ptr, T.u64], returns: T.u64_fast },
    ZSTD_decompress_usingDDict: { args: [T.ptr, T.ptr, T.u64, T.ptr, T.u64, T.ptr], returns: T.u64_fast },
  } as const;
  for (const name of LIBRARY_NAMES) {
    try {
      const library = ffi.dlopen(name, symbols).symbols;
      return library.ZSTD_versionNumber() >= 10400 ? library : undefined;
    } catch {}
  }
  return undefined;
}
