{
  "targets": [
    {
      "target_name": "loom_spawn",
      "conditions": [
        ["OS=='linux'", { "sources": ["native/spawn.cc"] }]
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_DISABLE_CPP_EXCEPTIONS", "NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-O2"]
    },
    {
      "target_name": "loom_fd",
      "conditions": [
        ["OS=='linux'", { "sources": ["native/fd.cc"] }]
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_DISABLE_CPP_EXCEPTIONS", "NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-O2"]
    }
  ],
  "conditions": [
    ["OS=='linux'", {
      "targets": [
        {
          "target_name": "loom_sandbox",
          "type": "executable",
          "sources": ["native/sandbox.cc"],
          "cflags_cc": ["-std=c++17", "-O2"]
        }
      ]
    }]
  ]
}
