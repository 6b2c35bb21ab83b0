// The part of yauzl 3.x (a CommonJS module without bundled types) that src/connectors/zip.ts uses.
declare module 'yauzl' {
  import type { EventEmitter } from 'node:events'
  import type { Readable } from 'node:stream'

  export interface ExtraField { id: number; data: Buffer }

  export class Entry {
    generalPurposeBitFlag: number
    compressionMethod: number
    crc32: number
    compressedSize: number
    uncompressedSize: number
    relativeOffsetOfLocalHeader: number
    /** A Buffer when the archive was opened with decodeStrings: false. */
    fileName: string | Buffer
    fileNameRaw?: Buffer
    extraFieldRaw?: Buffer
    fileCommentRaw?: Buffer
    fileComment?: string | Buffer
    comment?: string | Buffer
    extraFields: ExtraField[]
    getLastModDate (options?: { timezone?: 'local' | 'UTC'; forceDosFormat?: boolean }): Date
    isEncrypted (): boolean
    isCompressed (): boolean
    canDecodeFileData (): boolean
  }

  export interface Options {
    autoClose?: boolean
    lazyEntries?: boolean
    decodeStrings?: boolean
    validateEntrySizes?: boolean
    strictFileNames?: boolean
  }

  export class ZipFile extends EventEmitter {
    entryCount: number
    readEntry (): void
    openReadStream (entry: Entry, callback: (err: Error | null, stream: Readable) => void): void
    close (): void
  }

  export class RandomAccessReader extends EventEmitter {
    _readStreamForRange (start: number, end: number): Readable
    read (buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void
    close (callback: (err: Error | null) => void): void
  }

  export function fromRandomAccessReader (reader: RandomAccessReader, totalSize: number, options: Options, callback: (err: Error | null, zipfile: ZipFile) => void): void
  export function open (path: string, options: Options, callback: (err: Error | null, zipfile: ZipFile) => void): void
  export function getFileNameLowLevel (generalPurposeBitFlag: number, fileNameBuffer: Buffer, extraFields: ExtraField[], strictFileNames: boolean): string
  export function validateFileName (fileName: string): string | null

  const yauzl: {
    RandomAccessReader: typeof RandomAccessReader
    fromRandomAccessReader: typeof fromRandomAccessReader
    open: typeof open
    getFileNameLowLevel: typeof getFileNameLowLevel
    validateFileName: typeof validateFileName
  }
  export default yauzl
}
