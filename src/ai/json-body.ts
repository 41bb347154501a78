import { randomBytes } from 'node:crypto';
import type { AiRequest, ChatImage } from './ai-provider.js';

/**
 * A call's JSON body, as `build` makes it of the request. With images, it comes in parts: the
 * JSON around each image, and each image's base64 as the request already holds it. So a call
 * makes no copy of its images while it waits for the model (no data URL, no text of the whole
 * body): a worker's memory grows by the base64 of the images of the calls in flight, not by
 * several times it (docs/scaling.md, images).
 *
 * The body is built with a mark in place of each image (a number drawn for the call, which no
 * payload can hold), and cut at the marks. Base64 needs no escaping in a JSON string.
 */
export function jsonBody(
  request: AiRequest,
  build: (request: AiRequest) => unknown,
): string | string[] {
  const { images } = request;
  if (!images?.length) return JSON.stringify(build(request));
  const mark = `image-${randomBytes(12).toString('hex')}-`;
  const marked = images.map((image, i) => ({ ...image, data: `${mark}${i}.` }));
  const json = JSON.stringify(build({ ...request, images: marked }));
  // Split with a group: text, the index of an image, text, … text.
  return json.split(new RegExp(`${mark}(\\d+)\\.`)).flatMap((part, i) => {
    if (i % 2 === 0) return [part];
    // In slices (which share the image's text): each is copied only when it is written.
    const { data } = images[Number(part)] as ChatImage;
    const slices: string[] = [];
    for (let at = 0; at < data.length; at += SLICE) slices.push(data.slice(at, at + SLICE));
    return slices;
  });
}

/** How much of an image's base64 one write takes. */
const SLICE = 64 * 1024;
