// `node --import=tsx deploy/bin/docker-image.ts [tag]`: builds Corral's image (deploy/docker/Dockerfile) on the
// locally built Debian base, starting dockerd and building the base first when needed. Default tag corral/corral:latest.
import { buildCorralImage, CORRAL_IMAGE } from "../src/docker-image.js";

const tag = process.argv[2] ?? CORRAL_IMAGE;
const image = await buildCorralImage({ tag, log: (line) => console.log(`[docker-image] ${line}`) });
console.log(`[docker-image] ${image} ready`);
