// apps/tutorial/tutorial_11_gpt.cpp — §11, beyond the tutorial: a GPT.
//
// §10 slid one kernel over an image; a GPT reads text, and each position looks back at the
// earlier ones through attention. Five parts:
//   1. tokens and embeddings: a character vocabulary of a tiny text, encode/decode, and the
//      nn::Embedding rows the ids select;
//   2. attention on three tokens: q, k and v from small fixed matrices, the scores q·kᵀ/√d,
//      their softmax, the weighted sum of v — then F::scaled_dot_product_attention;
//   3. the causal mask: position t sees positions ≤ t only (tril, -inf, is_causal = true);
//   4. layer norm and the residual: x + attn(ln_1(x)), the first half of a block;
//   5. nn::GPT (nanoGPT's model) trained for 150 steps on a word list, and the words it
//      invents with nn::generate.
// Part 5 reads tests/apps/fixtures/words-sample.txt (run the program from the repository
// root, or pass the file's path). The output matches tests/apps/expected/tutorial_11_gpt.txt,
// which tests/reference/tutorial_11_gpt.py printed running the same steps in PyTorch. There
// is no seed text for this chapter, so the step comments quote the PyTorch lines they mirror.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.h>

namespace nn = ember::nn;
namespace data = ember::data;
namespace F = ember::nn::functional;

// Python's print of a list of ints: [3, 4, 5].
std::string python_list(const std::vector<std::int64_t>& ids) {
  std::string text = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
  return text + "]";
}

// Python's print of a list of one-character strings: [' ', 'b'].
std::string python_list(const std::u32string& characters) {
  std::string text = "[";
  for (std::size_t i = 0; i < characters.size(); ++i)
    text += (i ? ", '" : "'") + data::encode_utf8(characters.substr(i, 1)) + "'";
  return text + "]";
}

// "torch.tensor(ids)": token ids as an int64 tensor of the given shape.
ember::Tensor ids_tensor(std::vector<std::int64_t> ids, std::vector<std::int64_t> shape) {
  return ember::from_blob(ids.data(), shape, ember::TensorOptions().dtype(ember::kLong)).clone();
}

// gpt_model.py's get_batch (nanoGPT's): batch_size windows of block_size tokens starting at
// random positions (randint, the default generator); the targets y are the same windows one
// token later — at every position the model learns to predict the next character.
std::pair<ember::Tensor, ember::Tensor> get_batch(const ember::Tensor& data, std::int64_t block_size,
                                                  std::int64_t batch_size) {
  ember::Tensor ix = ember::randint(0, data.size(0) - block_size, {batch_size});
  std::vector<ember::Tensor> xs, ys;
  for (std::int64_t b = 0; b < batch_size; ++b) {
    const std::int64_t i = ix.select(0, b).item<std::int64_t>();
    xs.push_back(data.slice(0, i, i + block_size));          // data[i:i + block_size]
    ys.push_back(data.slice(0, i + 1, i + 1 + block_size));  // data[i + 1:i + 1 + block_size]
  }
  return {ember::stack(xs), ember::stack(ys)};
}

int main(int argc, char** argv) {
  // ---------------------------------------------------------------- 1. tokens and embeddings
  std::cout << "== 1. Tokens and embeddings ==\n";
  // "chars = sorted(set(text))": a model reads numbers, so every distinct character becomes
  // one token, numbered in sorted order — nanoGPT's character-level vocabulary.
  const std::u32string text = U"not to be";
  data::CharVocabulary vocab = data::CharVocabulary::from_text(text);
  std::cout << python_list(vocab.characters()) << "\n" << vocab.size() << "\n";
  // "ids = encode(text)", "decode(ids)": text to ids and back, character by character.
  std::vector<std::int64_t> ids = vocab.encode(text);
  std::cout << python_list(ids) << "\n" << vocab.decode(ids) << "\n";
  // "torch.manual_seed(0); wte = nn.Embedding(len(chars), 4)": a table of one learned row of
  // 4 numbers per token. Looking ids up picks rows: the two 't's (id 5) and the two 'o's
  // (id 4) get the same vector — the position is not in it yet (the GPT adds a second table
  // for that, wpe).
  ember::manual_seed(0);
  nn::Embedding wte(vocab.size(), 4);
  std::cout << wte(ids_tensor(ids, {static_cast<std::int64_t>(ids.size())})) << "\n";

  // ---------------------------------------------------------------- 2. attention
  std::cout << "== 2. Attention on three tokens ==\n";
  // "x = torch.tensor(...)": three tokens of 4 numbers each, as an embedding would give them.
  ember::Tensor x = ember::tensor({{1.0, 0.0, 1.0, 0.0},
                                   {0.0, 2.0, 0.0, 1.0},
                                   {1.0, 1.0, 2.0, 0.0}});
  // Three fixed projections; in the GPT they are learned, all three in one Linear (c_attn).
  ember::Tensor W_q = ember::tensor({{1.0, 0.0, 0.0, 1.0},
                                     {0.0, 1.0, 0.0, 0.0},
                                     {0.0, 0.0, 1.0, 0.0},
                                     {1.0, 0.0, 0.0, 0.0}});
  ember::Tensor W_k = ember::tensor({{0.0, 1.0, 0.0, 0.0},
                                     {1.0, 0.0, 0.0, 1.0},
                                     {0.0, 0.0, 1.0, 0.0},
                                     {0.0, 0.0, 1.0, 1.0}});
  ember::Tensor W_v = ember::tensor({{1.0, 0.0, 0.0, 0.0},
                                     {0.0, 0.0, 2.0, 0.0},
                                     {0.0, 1.0, 0.0, 0.0},
                                     {0.0, 0.0, 0.0, 3.0}});
  // "q, k, v = x @ W_q, x @ W_k, x @ W_v": each token asks a query, offers a key (what it
  // contains) and a value (what it passes on when chosen).
  ember::Tensor q = ember::matmul(x, W_q), k = ember::matmul(x, W_k), v = ember::matmul(x, W_v);
  std::cout << q << "\n" << k << "\n" << v << "\n";
  // "scores = q @ k.T / math.sqrt(4)": row i, column j is how well query i matches key j.
  // Dividing by √d keeps the scores' spread independent of the width d, so softmax does
  // not saturate on wide heads.
  ember::Tensor scores = ember::matmul(q, k.T()) / std::sqrt(4.0);
  std::cout << scores << "\n";
  // "weights = F.softmax(scores, dim=-1)": each row becomes positive weights summing to 1.
  ember::Tensor weights = F::softmax(scores, /*dim=*/-1);
  std::cout << weights << "\n";
  // "out = weights @ v": each token's output is its weighted average of the values.
  ember::Tensor out = ember::matmul(weights, v);
  std::cout << out << "\n";
  // "F.scaled_dot_product_attention(q, k, v)": the same three lines as one call (scale 1/√4
  // by default), the one the GPT's attention layer makes.
  ember::Tensor fused = F::scaled_dot_product_attention(q, k, v);
  std::cout << fused << "\n" << (fused.allclose(out) ? "True" : "False") << "\n";

  // ---------------------------------------------------------------- 3. the causal mask
  std::cout << "== 3. The causal mask ==\n";
  // "mask = torch.tril(torch.ones(3, 3))": 1 on and below the diagonal. A model that learns
  // to predict the next token must not see it: row t may use columns 0..t only.
  ember::Tensor mask = ember::tril(ember::ones({3, 3}));
  std::cout << mask << "\n";
  // "masked = scores.masked_fill(mask == 0, float('-inf'))": exp(-inf) = 0, so after the
  // softmax a masked position gets weight exactly 0 and the rest share the whole 1.
  ember::Tensor masked = scores.masked_fill(mask == 0, -std::numeric_limits<double>::infinity());
  std::cout << masked << "\n";
  weights = F::softmax(masked, /*dim=*/-1);
  std::cout << weights << "\n";
  out = ember::matmul(weights, v);
  std::cout << out << "\n";
  // "F.scaled_dot_product_attention(q, k, v, is_causal=True)": the same mask, built inside.
  fused = F::scaled_dot_product_attention(q, k, v, /*attn_mask=*/ember::Tensor(), /*dropout_p=*/0.0,
                                          /*is_causal=*/true);
  std::cout << fused << "\n" << (fused.allclose(out) ? "True" : "False") << "\n";

  // ---------------------------------------------------------------- 4. layer norm, residual
  std::cout << "== 4. Layer norm and residuals ==\n";
  // "ln_1 = nn.LayerNorm(4)": each token's 4 numbers normalised to mean 0 and variance 1
  // (then scaled by weight = 1 and shifted by bias = 0, both learned). Unlike §10's batch
  // norm it looks at one token at a time: no batch statistics, train and eval alike.
  nn::LayerNorm ln_1(4);
  // "def attn(h)": part 3's causal attention with the fixed projections.
  auto attn = [&](const ember::Tensor& h) {
    return F::scaled_dot_product_attention(ember::matmul(h, W_q), ember::matmul(h, W_k), ember::matmul(h, W_v),
                                           ember::Tensor(), 0.0, /*is_causal=*/true);
  };
  {
    ember::NoGradGuard no_grad;  // "with torch.no_grad():" (only to print without grad_fn)
    ember::Tensor h = ln_1(x);
    std::cout << h << "\n";
    // "x + attn(h)": the block adds what attention found to x instead of replacing it (a
    // residual connection), so x's own information travels on and the gradient has a
    // direct path back through every layer.
    std::cout << x + attn(h) << "\n";
  }

  // ---------------------------------------------------------------- 5. a GPT
  std::cout << "== 5. A GPT trained on a word list ==\n";
  const std::string path = argc > 1 ? argv[1] : "tests/apps/fixtures/words-sample.txt";
  if (!std::filesystem::is_regular_file(path)) {
    std::cerr << path << " not found: run the program from the repository root, or pass the word list's path\n";
    return 1;
  }
  // The word list, one word a line, as one text: the vocabulary is its distinct characters
  // (the newline is one of them: it ends a word). train_fraction 1: all of it trains.
  data::TextCorpus corpus = data::read_text_corpus(path, /*train_fraction=*/1.0);
  ember::Tensor train_data = corpus.train;  // "train_data = torch.tensor(encode(text))"
  vocab = corpus.vocabulary;
  std::cout << train_data.size(0) << " characters, " << vocab.size() << " distinct\n";

  // "torch.manual_seed(1337); model = GPT(...)": nanoGPT's model, small — 2 blocks of
  // 2 heads, 32 numbers per token, a context of 16 characters. Its init draws as PyTorch's
  // does, so the weights are PyTorch's, bit for bit.
  const std::int64_t block_size = 16, batch_size = 16;
  ember::manual_seed(1337);
  nn::GPT model(nn::GPTConfig{.vocab_size = vocab.size(), .block_size = block_size, .n_layer = 2, .n_head = 2,
                              .n_embd = 32});
  // "sum(p.numel() for p in model.parameters())": the output layer shares the token
  // embedding's matrix, counted once.
  std::cout << "parameters: " << model.num_parameters(/*non_embedding=*/false) << "\n";

  // Before training every character is about equally likely: the loss is near ln(65), the
  // cross-entropy of a uniform guess among 65 tokens.
  auto [xb, yb] = get_batch(train_data, block_size, batch_size);
  ember::Tensor loss = nn::GPT::loss(model(xb), yb);
  std::printf("loss before training: %.2f (ln %lld = %.2f)\n", loss.item<double>(),
              static_cast<long long>(vocab.size()), std::log(static_cast<double>(vocab.size())));

  // "optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)": Adam, the optimizer
  // transformers train with, with PyTorch's default weight decay 0.01.
  ember::optim::AdamW optimizer(model.parameters(), {.lr = 3e-3});
  // §7's loop, with random windows of the text as batches instead of a DataLoader's.
  const int max_steps = 150;
  for (int step = 1; step <= max_steps; ++step) {
    std::tie(xb, yb) = get_batch(train_data, block_size, batch_size);
    loss = nn::GPT::loss(model(xb), yb);  // "_, loss = model(xb, yb)"
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 25 == 0) std::printf("step %03d/%03d | loss %.2f\n", step, max_steps, loss.item<double>());
  }

  // "model.generate(start, max_new_tokens=100, temperature=0.8, top_k=10)": starting from a
  // newline (the start of a word), predict the next character's distribution, keep the 10
  // likeliest, draw one (multinomial, the default generator), append it, repeat. ember's
  // generate keeps each layer's keys and values (a KV cache) instead of recomputing them
  // for the whole text every step: the same draws, less work.
  model.eval();
  ember::manual_seed(42);
  ember::Tensor generated =
      nn::generate(model, ids_tensor(vocab.encode(U"\n"), {1, 1}),
                   {.max_new_tokens = 100, .temperature = 0.8, .top_k = 10});
  // "decode(generated[0].tolist()[1:]).replace('\n', ' ')": the new characters, a word a line
  // in the text, printed on one line.
  const std::int64_t* drawn = generated.contiguous().data_ptr<std::int64_t>();
  std::string words = vocab.decode(std::vector<std::int64_t>(drawn + 1, drawn + generated.numel()));
  std::replace(words.begin(), words.end(), '\n', ' ');
  std::cout << words << "\n";
  return 0;
}
