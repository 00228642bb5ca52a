/**
 * The sandbox sticker-album API (`{sticker_api_url}`, spec 4.9).
 *
 * To add routes, create `sticker/<area>.ts` exporting a `SandboxArea` and append it to
 * {@link stickerAreas}. `GET /__sandbox/health` and the rest of the admin API are always present.
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { stickerAlbumArea } from './album.js';
import { stickerHandshakeArea } from './handshake.js';

/** Areas of the sticker API server. */
export const stickerAreas: readonly SandboxArea[] = [stickerHandshakeArea, stickerAlbumArea];
