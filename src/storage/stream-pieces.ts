// The pieces a streamed add takes (StorageBackend.addStream): a large file's ciphertext, handed
// over piece by piece while the rest is still being encrypted.

/**
 * A piece whose SHA-256 its producer computed already (the encryption worker hashes each piece
 * while it is in its cache): a piece of exactly one chunk is a leaf block, so its CID costs the
 * storing thread no pass over the bytes.
 */
export interface HashedPiece { bytes: Uint8Array; sha256: Uint8Array }

/** Bytes, or bytes with their SHA-256. */
export type StreamPiece = Uint8Array | HashedPiece

/** The bytes of a piece either way. */
export function pieceBytes (piece: StreamPiece): Uint8Array {
  return piece instanceof Uint8Array ? piece : piece.bytes
}

/** The pieces joined, for a backend or caller that adds whole byte arrays only. */
export async function joinPieces (pieces: AsyncIterable<StreamPiece>): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const p of pieces) parts.push(pieceBytes(p))
  return Buffer.concat(parts)
}
