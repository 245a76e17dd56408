/**
 * A shipped migration's SQL never changes (CONTRIBUTING.md, "Add a migration"): a database that applied it will not
 * apply it again, so a changed text would leave databases of one version with two schemas. The migration files may
 * share fragments (the run-count functions that several PostgreSQL migrations make again); this pins the text each
 * version produces, on each database, so a fragment edited for a new migration cannot change a shipped one.
 * A migration that ships adds its line here.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { postgresMigrations } from "../../src/store/postgres/migrations";
import { migrations as sqliteMigrations } from "../../src/store/sqlite/migrations";

/** Version, then the SHA-256 of its SQL on SQLite and on PostgreSQL. */
const SHIPPED: [number, string, string][] = [
  [1, "eca2ee42e2cd0b27f5828476b4c52eeef21f9c88db5c2527030116e680fb99e1", "c7de70686e7029e8d0990fb3fd3a46611ac6ed02bd85d1daa4ca0fff040c62db"],
  [2, "5683a1df2bd4c96132bcfd46b00bd769f04e469e7bc570a3ef7a9220d08867f1", "7cffd1bd904b2a7eaf71ef3ab7cae1bf2450ff341bfab355c22bb225c33ccf2f"],
  [3, "6dcb0f1cd0d7087c2fe3e4b051cb95b78e60ca3db8e39dda28f34b79318b9da4", "c59aa8939e59683a71955173d0a0a10aa21a05aa70ad72c1f1433399c08c9e23"],
  [4, "75ac1cca315aabdb1157209918852d7b448aca32fc56fe4e68eebb254ad208fc", "34afe712330200ef78b20faa200abddd30c6f588dddbbaec14204687c16e7a87"],
  [5, "88e26352159be921732da08fb88d93ea2801f2288f812d4d2b863f3e9f1a325a", "089d823ba5090b1532c857dc9aef5600b10133f38e5cb25530d40f069d704d08"],
  [6, "520ae0a095eb8391573dc1525a051b20002487f0dd8ca076998db9874c75873f", "efd918d33fba07ca6798962025cf4ce3e86d489ddfabe41a18fd7c68cc831459"],
  [7, "84d5f55f3c9622fb61fae26a02f8684a5b70acfa2bbf7dc2d1d5e8e0027fa79e", "84d5f55f3c9622fb61fae26a02f8684a5b70acfa2bbf7dc2d1d5e8e0027fa79e"],
  [8, "030fd58407b03ace3d65b4af0e05387af5fa39e8368bbac17e590ab8dc6ff167", "02f5b88f31ba7eeb87f7300f1aad332e9eafde93646fbea3adea857564bb6fcf"],
  [9, "7d4a06461ed307cdad6f7cd6d71632f2db69ce2b3c48bbbf898aa47e34d5159a", "08afb69d8ba4fa86d90e0901d268686f48ed81451aeca32359c80b12c344fbcc"],
  [10, "6297c2376bdf692497fdbb7fb8566121fd759e60bb182cf78320d85a622e59b2", "a9dd17fbaa714dd7a2e865b34237394ea5214b6cb7319dba43cef1154cf52b10"],
  [11, "8262d0a359479e9edb54815b1091fa7aec4ea27a2c07f5e0b8d1fced5d3f1ce0", "fab7488cc72d5b913365630f4de2b6f1c70eaa9fc06af748fc07ce4643b73d4b"],
  [12, "7cd4ffdbf1a405bcfb9e87643c3e64ef1535e4658ae8f4e3ba69e1ddba715427", "7840bc0e7f3c54497f29ff5b76caa608666a21bc34971bd016ce24be1efa3cd3"],
  [13, "582336d8c19f19daaa64a278626560617199984199369f19cae2d628e7457e65", "f19917bc0fff196b505504e9de7c2158a695c427fb6c2f40c969c187dba4b365"],
  [14, "2370c23406cbe5352110f42de4e19e6983d07bb0ff4483f4649140db3d6be6fe", "2c762fe1c87fab01231379f8a79d6c7d14e3f1078e466d45c78be868c8bd44c4"],
  [15, "1117b7ef6f5e9defd261a0e80301a48c4e2720d7363438771503277663c39aee", "1fa1ac2ef5c79ea05636f0872ac2f09921bee05e65f1a695ca14091c9421ea65"],
  [16, "d048bd455931bc3bb86a47a6702b604e33ab75cbcea3072cbf0a0ca0d2e73ba8", "a8d257eeac266365c1a026481dee4dcd0dd3ca399f0ad41ccc4bb0dacf7b8da2"],
  [17, "b0a241eaee4c37edeae32892243d5e5893ce6102408e24c728f9e493acfe7103", "f07b7bdb6271e74e20a36b74d994c68edac937607d299fb2d8b5270daa0b93db"],
  [18, "34b62ddf4db713cf3d20cad5eebf999d1a313e46aed1c833d2ef60aaa435a6f5", "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a"],
  [19, "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a", "1b965ad4af4add2b92e7e421e8d05d4727f7d402f0e4e8bf7a221bb87ab4dbcd"],
  [20, "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a", "b90851d1f06684de7a1fab2f96e56eec84c1c569c4bc18f15c4f72a2383a43d3"],
  [21, "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a", "c2905ed182095c8c84da68c1ccce374e38297a99f6a9c038a47d78ebc0a56652"],
  [22, "3d9e024375f75b04e0ae06a1058bd9b2a165c926aa7870ce83c842517b554723", "f5f378ba0a6ac6cc54b0a8a1ffb6128aeed0995ca486a78287d99ad113d70c05"],
  [23, "113adf361c8e300a8f48fbad009583cb716aca0da4dc12b5295d02a472227bed", "91c647d10b65e7debdfccce13fe9d2ee680ac31ff192abd75d62c5be266812ae"],
  [24, "bff3a03d5e12f4de5f2e3936213a91dd8d899d3f52f59ee0df7d347229e7b905", "1cb4e19660d257b04abd588f1b362fd42bf80e22c54a988a2dae5d0588b4e035"],
  [25, "564b27c99d073ae9ed0edbf6ecbb40ad9bf840ee382174e1c7016887f5e29fa5", "d6d62fc18aef72a61820e96407c0ff33b826624ad482f68b20bacc947800d021"],
  [26, "e235f4e9e6e6a4589cf568848f137b066754feda77bb6352a4de4ff429576522", "ce252f2feb224fb194b2994c267a1ccfcde112505487c212ebdb8d1f7edecb7c"],
  [27, "4972151f4b5512911126dadbfbaa33bed44499df9d3011f6e61ada7320b0f84b", "734ba27503881c73ec5cf322f06616d1b6ed05d760c8e872fbed28c6bd2b78df"],
  [28, "3a1df668d99815231e84c986467d8427ab79575238a037f49a38d6106dd8c010", "fd2e17d940482bd9968d11af567d42f5a1b57a9a2b60712ef1eef867561262ea"],
  [29, "1508abeacfb626ede50093fa06b39628ff1a0090a93d74886fbe4b1df1cd1af6", "16785bd66b2a59e870a43c2213e662e17ec005c97820dd89a8b14b28d1945a6f"],
  [30, "2c7868e19b942a3aa08d5b7c59fb2fbd54e4046071a12957781dbef3b392cd95", "39f1160a535fa8f3ae824ed781dd6d94f0f020fc2e51c00f80c09ba479226df6"],
  [31, "95cb763586d5dbe67b0b3a1ba30218fef4a4965e6ebd1a299565d2c894542dec", "65787094bda4ff6c06ef4139856a056c67c3ff072aff975fe74515ac98cb50d6"],
  [32, "10fd750379be7783dface46b5477b20e2704f2de8a990f8778e61ce0c317353c", "0cd769c851a79ac57c5e3c2b947095b86bfc3c12105e54aad7b1963a63b15694"],
  [33, "278aa8e97e31f653f0573477bb48c622065d09ecfa46b62f6f9821b83e69c3f6", "37f226622d6328f2683532243b88236105063e89a2ed9ac436942f0dd8797349"],
];

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

test("every shipped migration produces the SQL it shipped with, on both databases", () => {
  const changed: string[] = [];
  for (const [version, sqlite, postgres] of SHIPPED) {
    const onSqlite = sqliteMigrations.find((m) => m.version === version);
    const onPostgres = postgresMigrations.find((m) => m.version === version);
    if (!onSqlite || sha256(onSqlite.sql) !== sqlite) changed.push(`SQLite ${version}`);
    if (!onPostgres || sha256(onPostgres.sql) !== postgres) changed.push(`PostgreSQL ${version}`);
  }
  expect(changed).toEqual([]);
});

test("every migration of this build is pinned here, so a new one cannot ship unpinned", () => {
  const pinned = new Set(SHIPPED.map(([version]) => version));
  const versions = [...new Set([...sqliteMigrations, ...postgresMigrations].map((m) => m.version))].sort((a, b) => a - b);
  expect(versions.filter((version) => !pinned.has(version))).toEqual([]);
});
