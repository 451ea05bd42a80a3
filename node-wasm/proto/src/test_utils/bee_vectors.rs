//! Test vectors from ethersphere/bee, for the BMT and the file splitter alike.

use crate::swarm::CHUNK_SIZE;

const C: usize = CHUNK_SIZE;

/// go-mockbytes' sequential data, as bee's file vectors use it: byte i is i mod 255.
pub fn sequential(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 255) as u8).collect()
}

/// bee pkg/file/testing/vector.go (fileLengths and fileExpectHashHex), all 21 vectors: a file of
/// [`sequential`] bytes of each length, and its root address. The lengths that file comments out
/// are listed in full in bee's pkg/file/splitter/internal/job_test.go, which runs every one of
/// them. Those up to [`CHUNK_SIZE`] are a single chunk, whose address is that of its BMT.
pub const FILE_VECTORS: [(usize, &str); 21] = [
    (31, "ece86edb20669cc60d142789d464d57bdf5e33cb789d443f608cbd81cfa5697d"),
    (32, "0be77f0bb7abc9cd0abed640ee29849a3072ccfd1020019fe03658c38f087e02"),
    (33, "3463b46d4f9d5bfcbf9a23224d635e51896c1daef7d225b86679db17c5fd868e"),
    (63, "95510c2ff18276ed94be2160aed4e69c9116573b6f69faaeed1b426fea6a3db8"),
    (64, "490072cc55b8ad381335ff882ac51303cc069cbcb8d8d3f7aa152d9c617829fe"),
    (65, "541552bae05e9a63a6cb561f69edf36ffe073e441667dbf7a0e9a3864bb744ea"),
    (C, "c10090961e7682a10890c334d759a28426647141213abda93b096b892824d2ef"),
    (C + 31, "91699c83ed93a1f87e326a29ccd8cc775323f9e7260035a5f014c975c5f3cd28"),
    (C + 32, "73759673a52c1f1707cbb61337645f4fcbd209cdc53d7e2cedaaa9f44df61285"),
    (C + 63, "db1313a727ffc184ae52a70012fbbf7235f551b9f2d2da04bf476abe42a3cb42"),
    (C + 64, "ade7af36ac0c7297dc1c11fd7b46981b629c6077bce75300f85b02a6153f161b"),
    (C * 2, "29a5fb121ce96194ba8b7b823a1f9c6af87e1791f824940a53b5a7efe3f790d9"),
    (C * 2 + 32, "61416726988f77b874435bdd89a419edc3861111884fd60e8adf54e2f299efd6"),
    (C * 128, "3047d841077898c26bbe6be652a2ec590a5d9bd7cd45d290ea42511b48753c09"),
    (C * 128 + 31, "e5c76afa931e33ac94bce2e754b1bb6407d07f738f67856783d93934ca8fc576"),
    (C * 128 + 32, "485a526fc74c8a344c43a4545a5987d17af9ab401c0ef1ef63aefcc5c2c086df"),
    (C * 128 + 64, "624b2abb7aefc0978f891b2a56b665513480e5dc195b4a66cd8def074a6d2e94"),
    (C * 129, "b8e1804e37a064d28d161ab5f256cc482b1423d5cd0a6b30fde7b0f51ece9199"),
    (C * 130, "59de730bf6c67a941f3b2ffa2f920acfaa1713695ad5deea12b4a121e5f23fa1"),
    (C * 128 * 128, "522194562123473dcfd7a457b18ee7dee8b7db70ed3cfa2b73f348a992fdfd3b"),
    (C * 128 * 128 + 32, "ed0cc44c93b14fef2d91ab3a3674eeb6352a42ac2f0bbe524711824aae1e7bcc"),
];
